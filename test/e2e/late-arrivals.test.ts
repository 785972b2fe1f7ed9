// Issue 21 §4/3 with real processes: late arrivals are delivered once, whatever their id says.
// A real sensor (`attend run`) and a real Stop-hook drain (`attend inbox --drain`) that have
// been running a while are sent messages whose ids are 45 s, 10 minutes and a day behind:
// written by attend's writer (an index line) and by hand (renamed in, no line), into #open
// and into a tray that did not exist yet. Each surfaces exactly once; nothing repeats later,
// in either conduit. test/bus/arrivals.test.ts has the same cases in-process, relay imports too.

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join as pjoin } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { formatSignal } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { ME, type FakeSession, type TempBus, runBin, useTempBus, waitFor } from '../helpers/bus.js';
import { headerIds, ids, put, startSensor, type SensorProc, traceIds } from '../helpers/delivery.js';

let bus: TempBus;
const newSession = useTempBus((b) => (bus = b));
const procs: SensorProc[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.proc.kill('SIGKILL');
    await p.exited;
  }
});

const OPEN = { kind: 'open' } as const;
const tray = (s: FakeSession) => ({ kind: 'tray', key: attendKey(s.cwd) }) as const;
const LAGS = { '45 s': 45_000, '10 min': 600_000, '1 day': 86_400_000 } as const;
const behind = (lag: number) => ids(() => Date.now() - lag);

/** A file renamed in the way another tool (or an older attend) would: no index line; the bus's person writes it (any other person is a stranger). */
function byHand(scope: Scope, to: string, id: string, body: string): void {
  const dir = scopeDir(bus.root, scope);
  mkdirSync(dir, { recursive: true });
  const tmp = pjoin(dir, `.tmp-${id}`);
  writeFileSync(tmp, `${formatSignal({ from: `external:${ME}@pts-1`, project: 'proj', cwd: '/srv/proj', fromKind: 'human', fromId: ME, to, body })}\n`);
  renameSync(tmp, pjoin(dir, `${id}.signal`));
}

/** For each lag, one message by attend's writer into `indexed` and one by hand into `hand`. */
function writeLate(s: FakeSession, indexed: Scope, hand: Scope): string[] {
  const out: string[] = [];
  const to = (scope: Scope) => (scope.kind === 'tray' ? s.sessionId : '*');
  for (const [name, lag] of Object.entries(LAGS)) {
    out.push(put(bus.root, behind(lag), { scope: indexed, to: to(indexed), body: `indexed, ${name} late` }));
    const id = behind(lag)();
    byHand(hand, to(hand), id, `by hand, ${name} late`);
    out.push(id);
  }
  return out;
}

/** How many times each id surfaced in a conduit's output (headers, and the trace's digests). */
function counts(stdout: string, stderr: string): Map<string, number> {
  const n = new Map<string, number>();
  for (const id of [...headerIds(stdout), ...traceIds(stderr)]) n.set(id, (n.get(id) ?? 0) + 1);
  return n;
}

const drainOnce = (s: FakeSession) => runBin(['inbox', '--drain', '--format', 'plain', '--trace'], { env: s.env, cwd: s.cwd, input: '{}' });

describe('late arrivals through real conduits', () => {
  it('attend run shows each late message once: indexed into #open, by hand into a tray that did not exist', async () => {
    const s = newSession({ name: 'alpha' });
    const p = startSensor(s.env, ['--trace'], s.cwd);
    procs.push(p);
    await waitFor(() => readSensor(bus.root, s.sessionId)?.pid === p.proc.pid, { what: 'the sensor claim' });
    // Running a while: a message on time is shown, so the ledger and its watermarks exist.
    const first = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'on time' });
    await waitFor(() => counts(p.stdout(), p.stderr()).has(first), { what: 'the first message' });

    const late = writeLate(s, OPEN, tray(s));
    await waitFor(() => late.every((id) => counts(p.stdout(), p.stderr()).has(id)), { what: 'every late message', timeoutMs: 20_000 });
    // A message after them, shown too: the sensor went on, and nothing late came twice.
    const after = put(bus.root, ids(), { scope: tray(s), to: s.sessionId, body: 'on time again' });
    await waitFor(() => counts(p.stdout(), p.stderr()).has(after), { what: 'the message after' });
    const seen = counts(p.stdout(), p.stderr());
    for (const id of [first, ...late, after]) expect(seen.get(id), id).toBe(1);
    // The other conduit of the same session finds nothing left of them.
    const d = drainOnce(s);
    expect(d.exitCode).toBe(0);
    const drained = counts(d.stdout, d.stderr);
    for (const id of [first, ...late, after]) expect(drained.has(id), id).toBe(false);
  });

  it('the Stop-hook drain shows each late message once: indexed into the tray, by hand into #open', async () => {
    const s = newSession({ name: 'bravo' });
    const first = put(bus.root, ids(), { scope: tray(s), to: s.sessionId, body: 'on time' });
    put(bus.root, ids(), { scope: OPEN, to: '*', body: 'on time, #open' });
    const d0 = drainOnce(s);
    expect(d0.exitCode).toBe(0);
    expect(counts(d0.stdout, d0.stderr).get(first)).toBe(1);

    const late = writeLate(s, tray(s), OPEN);
    // A drain right after a rename with no line leaves it for the next (the settle window):
    // drains until every late message has come, each counted.
    const seen = new Map<string, number>();
    await waitFor(
      () => {
        const d = drainOnce(s);
        expect(d.exitCode).toBe(0);
        for (const [id, n] of counts(d.stdout, d.stderr)) seen.set(id, (seen.get(id) ?? 0) + n);
        return late.every((id) => seen.has(id));
      },
      { what: 'every late message through drains', timeoutMs: 20_000 },
    );
    for (const id of late) expect(seen.get(id), id).toBe(1);
    expect(seen.has(first)).toBe(false);
    const last = drainOnce(s);
    expect(last).toMatchObject({ exitCode: 0, stdout: '' });
  });
});
