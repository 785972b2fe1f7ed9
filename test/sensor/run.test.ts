// The sensor's wiring (tools/sensor/run.ts) in-process over a temporary bus: the Claude process
// is an injected process reader, stopping is an injected promise, and the tick is shortened,
// so nothing is spawned. The spawned binary is test/e2e/sensor.test.ts.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import type { Identity, ProcInfo } from '../../tools/identity/resolve.js';
import { runSensor, type SensorExit } from '../../tools/sensor/run.js';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { agent, headerIds, ids, put } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
// A sensor a failed test left running is stopped before its bus goes.
const running: { signal(): void; exit: Promise<SensorExit> }[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    s.signal();
    await s.exit;
  }
});

const CLAUDE_PID = 5151;
const OPEN = { kind: 'open' } as const;

function session(): Identity {
  const id = '00000000-0000-4000-8000-0000000000a7';
  return { ...agent(id, join(bus.dir, 'work', 'me')), pid: CLAUDE_PID, record: { pid: CLAUDE_PID, sessionId: id, procStart: '900' } };
}

function start(who: Identity) {
  const lines: string[] = [];
  const warnings: string[] = [];
  let claude: ProcInfo | null = { ppid: 1, start: '900', state: 'S' };
  let signal: () => void = () => {};
  const stopSignal = new Promise<void>((r) => (signal = r));
  const exit: Promise<SensorExit> = runSensor({
    root: bus.root,
    sessionsDir: join(bus.claudeDir, 'sessions'),
    identity: who,
    env: {},
    pid: process.pid,
    now: Date.now,
    reporter: silentReporter,
    procInfo: (pid) => (pid === CLAUDE_PID ? claude : null),
    write: (l) => void lines.push(l),
    warn: (l) => void warnings.push(l),
    poll: false,
    pollIntervalMs: 1000,
    trace: false,
    stopSignal,
    tickMs: 20,
  });
  const up = () => waitFor(() => readSensor(bus.root, who.id)?.pid === process.pid && readPresence(bus.root).some((p) => p.id === who.id && p.role === 'sensor'), { what: 'the sensor' });
  const handle = { lines, warnings, exit, up, zombie: () => (claude = { ppid: 1, start: '900', state: 'Z' }), signal: () => signal() };
  running.push(handle);
  return handle;
}

describe('runSensor', () => {
  it('delivers each message once, and stops when the liveness rule says its Claude process is gone', async () => {
    const who = session();
    const s = start(who);
    await s.up();
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'live' });
    await waitFor(() => headerIds(s.lines.join('\n')).includes(a), { what: 'the message' });
    expect(s.lines[0]).toMatch(/^\[attend\] sensor started for /);
    expect(headerIds(s.lines.join('\n'))).toEqual([a]);
    s.zombie();
    const exit = await s.exit;
    expect(exit).toEqual({ reason: 'claude-gone', delivered: 1 });
    expect(readSensor(bus.root, who.id)).toBeNull();
    expect(readPresence(bus.root).filter((p) => p.role === 'sensor')).toEqual([]);
  });

  it('a restart resumes from the ledger: it says so and repeats nothing', async () => {
    const who = session();
    const first = start(who);
    await first.up();
    const mk = ids();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'before' });
    await waitFor(() => headerIds(first.lines.join('\n')).includes(a), { what: 'the first message' });
    first.signal();
    expect(await first.exit).toEqual({ reason: 'signal', delivered: 1 });
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'while down' });
    const second = start(who);
    await waitFor(() => headerIds(second.lines.join('\n')).includes(b), { what: 'the missed message' });
    expect(second.lines[0]).toMatch(/^\[attend\] sensor resumed for .*nothing already delivered is repeated$/);
    expect(headerIds(second.lines.join('\n'))).toEqual([b]);
    second.signal();
    expect((await second.exit).reason).toBe('signal');
  });
});
