// A Claude process that ended but was never reaped (a zombie: state `Z` in /proc/<pid>/stat)
// is gone, by the one liveness rule (tools/identity/resolve.ts `sameProcess`), and its
// sensor must stop (issue 19): its pid and start time still read as before, so a sensor that
// compared only those would run on for as long as the zombie's parent lives.

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { BIN, makeTempBus, procStart, type TempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
const procs: ChildProcess[] = [];
beforeEach(() => {
  bus = makeTempBus();
});
afterEach(async () => {
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

// The stand-in Claude process: it writes its own session record, then starts `attend run` as
// its child (as Monitor does), so the sensor's identity comes from its ancestry; the sensor's
// pid and stderr go to files beside the record.
const CLAUDE = `
const { readFileSync, writeFileSync, openSync } = require('node:fs');
const { spawn } = require('node:child_process');
const [bin, sessionId, cwd, out] = process.argv.slice(1);
const stat = readFileSync('/proc/self/stat', 'utf8');
const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
writeFileSync(process.env.CLAUDE_CONFIG_DIR + '/sessions/' + process.pid + '.json', JSON.stringify({ pid: process.pid, sessionId, cwd, procStart, startedAt: Date.now(), status: 'idle', kind: 'interactive' }));
const sensor = spawn(process.execPath, [bin, 'run'], { cwd, stdio: ['ignore', 'ignore', openSync(out + '.err', 'a')] });
writeFileSync(out + '.pid', String(sensor.pid));
setInterval(() => {}, 1 << 30);
`;

/**
 * A parent that never reaps: `sh` starts the stand-in Claude process in the background,
 * prints its pid, and execs `sleep`, which never calls wait(), so the child, once killed,
 * stays a zombie for as long as the parent lives.
 */
async function unreapedClaude(env: Record<string, string>, args: string[]): Promise<number> {
  const parent = spawn('sh', ['-c', '"$0" -e "$CLAUDE_SCRIPT" "$@" & echo $!; exec sleep 100000', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...env, CLAUDE_SCRIPT: CLAUDE } });
  procs.push(parent);
  let out = '';
  parent.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const line = await waitFor(() => /^\d+\n/.exec(out)?.[0], { what: 'the child pid' });
  return Number(line.trim());
}

const alive = (pid: number) => {
  const st = stateOf(pid);
  return st !== undefined && st !== 'Z' && st !== 'X';
};

describe('attend run and a zombie Claude process', () => {
  it('exits once its Claude process is a zombie, though its pid, start time and session record remain', async () => {
    const sessionId = '00000000-0000-4000-8000-0000000000b1';
    const cwd = join(bus.dir, 'work', 'zombie');
    mkdirSync(cwd, { recursive: true });
    const out = join(bus.dir, 'sensor');
    const pid = await unreapedClaude({ ...bus.env, CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: sessionId }, [BIN, sessionId, cwd, out]);
    const sensorPid = Number(await waitFor(() => existsSync(`${out}.pid`) && readFileSync(`${out}.pid`, 'utf8'), { what: 'the sensor pid' }));
    await waitFor(() => readSensor(bus.root, sessionId)?.pid === sensorPid, { what: 'the sensor claim' });
    const start = procStart(pid);
    process.kill(pid, 'SIGKILL');
    // The control: the process is a zombie, not gone, and reads as the same pid and start.
    await waitFor(() => stateOf(pid) === 'Z', { what: `pid ${pid} to be a zombie` });
    expect(procStart(pid)).toBe(start);
    // The sensor is init's child now (its parent was killed); it ends itself, and init reaps it.
    await waitFor(() => !alive(sensorPid), { timeoutMs: 15_000, what: `the sensor to exit (${readFileSync(`${out}.err`, 'utf8')})` });
    expect(readFileSync(`${out}.err`, 'utf8')).toContain('the Claude Code session is gone');
    expect(readSensor(bus.root, sessionId)).toBeNull();
    expect(stateOf(pid)).toBe('Z');
  });
});
