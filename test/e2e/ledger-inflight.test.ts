// Issue 21 §6: a conduit SIGKILLed between recording a wake in flight and confirming it loses
// nothing. A real `attend run` whose stdout nobody reads blocks in the middle of a wake (the
// pipe is full), its ledger naming that wake in flight; it is killed there. The sensor that
// follows shows every message the dead one did not, offers the wake in flight again, and
// says it may repeat; nothing else repeats.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flightOf, readLog } from '../../tools/bus/delivery/ledger-log.js';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { attendKey } from '../../tools/wire/names.js';
import { BIN, type FakeSession, fakeSession, makeTempBus, type TempBus, waitFor } from '../helpers/bus.js';
import { headerIds, ids, put, startSensor } from '../helpers/delivery.js';

let bus: TempBus | undefined;
const sessions: FakeSession[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
  bus?.cleanup();
  bus = undefined;
});

/** More than a pipe and a reader's buffer hold: the sensor must block part-way. */
const MESSAGES = 160;

describe('a conduit killed with a wake in flight', () => {
  it('loses nothing: the next sensor shows the rest and offers the wake in flight again, said to be a possible repeat', async () => {
    const b = (bus = makeTempBus());
    const s = fakeSession(b, { name: 'api', cwd: join(b.dir, 'work', 'api') });
    sessions.push(s);
    // A sensor whose stdout is not read: paused, the stream stops reading once its buffer is
    // full, and the pipe fills behind it.
    const proc = spawn(process.execPath, [BIN, 'run'], { env: s.env, cwd: s.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => (printed += d));
    proc.stdout!.pause();
    const exited = new Promise<void>((r) => proc.on('exit', () => r()));
    let err = '';
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const log = join(b.root, 'state', 'ledger', encodeURIComponent(s.sessionId), 'ledger.jsonl');
    // A sensor prints nothing on start (issue #11 §7): its claim says it is up.
    await waitFor(() => readSensor(b.root, s.sessionId)?.pid === proc.pid, { what: 'the sensor claim' });

    // Direct messages (each shown in full, 8 a wake), long enough to fill the pipe.
    const tray = { kind: 'tray', key: attendKey(s.cwd) } as const;
    const mk = ids();
    const sent = Array.from({ length: MESSAGES }, (_, i) => put(b.root, mk, { scope: tray, to: s.sessionId, body: `${i} ${'x'.repeat(700)}` }));

    // Blocked in a wake: the log names it in flight, owned by the sensor, and stays so.
    const inFlight = () => {
      const line = readLog(log);
      const f = line ? flightOf(line) : undefined;
      return f?.st === 'f' && f.pid === proc.pid ? f : undefined;
    };
    let last = '';
    await waitFor(
      () => {
        const f = inFlight();
        const key = f ? `${f.ids.join(',')}` : '';
        const still = key !== '' && key === last;
        last = key;
        return still;
      },
      { what: 'the sensor blocked with a wake in flight', intervalMs: 300, timeoutMs: 30_000 },
    );
    proc.kill('SIGKILL');
    await exited;
    // Killed between the record and the confirm: the wake is still in flight, its owner gone.
    const flight = inFlight();
    expect(flight?.ids.length).toBeGreaterThan(0);

    // What the dead sensor printed, read now.
    const ended = new Promise<void>((r) => proc.stdout!.on('end', () => r()));
    proc.stdout!.resume();
    await ended;
    const before = headerIds(printed);
    expect(before.length).toBeLessThan(MESSAGES);

    const next = startSensor(s.env, [], s.cwd);
    try {
      await waitFor(() => sent.every((id) => before.includes(id) || headerIds(next.stdout()).includes(id)), { what: 'every message', timeoutMs: 30_000 });
      const after = headerIds(next.stdout());
      // Nothing lost, nothing shown twice by the new sensor.
      expect(new Set([...before, ...after])).toEqual(new Set(sent));
      expect(new Set(after).size).toBe(after.length);
      // The wake in flight is offered again, and said to be a possible repeat.
      for (const id of flight!.ids) expect(after).toContain(id);
      expect(next.stdout()).toMatch(new RegExp(`\\[attend\\] ${flight!.ids.length} messages? below may repeat \\(a conduit stopped while showing (it|them)\\)`));
      // A repeat is only what was in flight.
      const repeated = after.filter((id) => before.includes(id));
      for (const id of repeated) expect(flight!.ids).toContain(id);
    } finally {
      next.proc.kill('SIGTERM');
      await next.exited;
    }
    expect(err).not.toMatch(/failed/);
  }, 60_000);
});
