// A Claude process that ended but was never reaped (a zombie: state `Z` in /proc/<pid>/stat)
// is gone, by the one liveness rule (tools/identity/resolve.ts `sameProcess`), and its
// sensor must stop (issue 19): its pid and start time still read as before, so a sensor that
// compared only those would run on for as long as the zombie's parent lives.

import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { makeTempBus, procStart, type TempBus, waitFor } from '../helpers/bus.js';
import { type SensorProc, startSensor } from '../helpers/delivery.js';

let bus: TempBus;
const procs: ChildProcess[] = [];
const sensors: SensorProc[] = [];
beforeEach(() => {
  bus = makeTempBus();
});
afterEach(async () => {
  for (const p of sensors.splice(0)) {
    p.proc.kill('SIGKILL');
    await p.exited;
  }
  // Killing the parent hands the zombie to init, which reaps it.
  for (const p of procs.splice(0)) p.kill('SIGKILL');
  bus.cleanup();
});

const stateOf = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
};

/**
 * A parent that never reaps: `sh` starts the stand-in Claude process in the background,
 * prints its pid, and execs `sleep`, which never calls wait(), so the child, once killed,
 * stays a zombie for as long as the parent lives.
 */
async function unreapedChild(): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 100000 & echo $!; exec sleep 100000'], { stdio: ['ignore', 'pipe', 'ignore'] });
  procs.push(parent);
  let out = '';
  parent.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const line = await waitFor(() => /^\d+\n/.exec(out)?.[0], { what: 'the child pid' });
  return Number(line.trim());
}

describe('attend run and a zombie Claude process', () => {
  it('exits once its Claude process is a zombie, though its pid, start time and session record remain', async () => {
    const pid = await unreapedChild();
    const sessionId = '00000000-0000-4000-8000-0000000000b1';
    const cwd = join(bus.dir, 'work', 'zombie');
    writeFileSync(
      join(bus.claudeDir, 'sessions', `${pid}.json`),
      JSON.stringify({ pid, sessionId, cwd, procStart: procStart(pid), startedAt: Date.now(), status: 'idle', kind: 'interactive' }),
    );
    const env = { ...bus.env, CLAUDECODE: '1', CLAUDE_PID: String(pid), CLAUDE_CODE_SESSION_ID: sessionId };
    const p = startSensor(env, [], bus.home);
    sensors.push(p);
    await waitFor(() => readSensor(bus.root, sessionId)?.pid === p.proc.pid, { what: 'the sensor claim' });
    const start = procStart(pid);
    process.kill(pid, 'SIGKILL');
    // The control: the process is a zombie, not gone, and reads as the same pid and start.
    await waitFor(() => stateOf(pid) === 'Z', { what: `pid ${pid} to be a zombie` });
    expect(procStart(pid)).toBe(start);
    const code = await Promise.race([p.exited, new Promise<string>((r) => setTimeout(() => r(`still running: ${p.stderr()}`), 15_000))]);
    expect(code).toBe(0);
    expect(p.stderr()).toContain('the Claude Code session is gone');
    expect(readSensor(bus.root, sessionId)).toBeNull();
    expect(stateOf(pid)).toBe('Z');
  });
});
