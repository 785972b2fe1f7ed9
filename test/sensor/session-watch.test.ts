// The sensor's watch on its Claude process (tools/sensor/session-watch.ts) over a temporary
// bus, with the liveness rule fed by an injected process reader: no process is spawned.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLedger } from '../../tools/bus/delivery/ledger.js';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { claimSensor, readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import type { Identity, ProcInfo, SessionRecord } from '../../tools/identity/resolve.js';
import { processAlive } from '../../tools/identity/system.js';
import { beat } from '../../tools/sensor/heartbeat.js';
import { scanOnce } from '../../tools/sensor/scan.js';
import { checkSession, type SessionWatchDeps } from '../../tools/sensor/session-watch.js';
import { nameLookup } from '../../tools/wire/display.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { agent } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const CLAUDE_PID = 4242;
const SID = '00000000-0000-4000-8000-0000000000e1';

function session(): Identity {
  const record: SessionRecord = { pid: CLAUDE_PID, sessionId: SID, procStart: '777' };
  return { ...agent(SID, join(bus.dir, 'work', 'me')), pid: CLAUDE_PID, record };
}

/** The real rule (`processAlive` -> `sameProcess`) over what /proc would say about the pid. */
function deps(proc: ProcInfo | null, record: SessionRecord | null = null, warn: string[] = []): SessionWatchDeps & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    root: bus.root,
    env: {},
    pid: process.pid,
    alive: (pid, start) => {
      asked.push(pid);
      return processAlive(pid, start, () => proc);
    },
    readRecord: () => record,
    warn: (l) => void warn.push(l),
  };
}

describe('the sensor’s watch on its Claude process', () => {
  it('is the same session while the process runs with its recorded start time', () => {
    const who = session();
    const d = deps({ ppid: 1, start: '777', state: 'S' }, who.record);
    const r = checkSession(d, who);
    expect(r).toEqual({ gone: false, who });
    expect(d.asked).toEqual([CLAUDE_PID]);
  });

  it('is gone when the process is gone, a zombie, or another process on a recycled pid', () => {
    const who = session();
    expect(checkSession(deps(null), who)).toEqual({ gone: true });
    expect(checkSession(deps({ ppid: 1, start: '777', state: 'Z' }), who)).toEqual({ gone: true });
    expect(checkSession(deps({ ppid: 1, start: '778', state: 'S' }), who)).toEqual({ gone: true });
  });

  it('never asks about a process for a sensor outside a Claude Code session', () => {
    const person: Identity = { resolved: false, reason: 'test', kind: 'human', id: 'hana', from: 'external:hana', origin: '/p', user: 'hana' };
    const d = deps(null);
    expect(checkSession(d, person)).toEqual({ gone: false, who: person });
    expect(d.asked).toEqual([]);
  });

  it('follows /clear: the new id takes the ledger and the claim, and the old presence goes', () => {
    const who = session();
    // A sensor that ran under the old id: a ledger, a claim and a presence.
    scanOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (me) => nameLookup([], me), write: () => {}, warn: () => {} }, who);
    expect(claimSensor(bus.root, who.id, process.pid).ok).toBe(true);
    beat({ root: bus.root, pid: process.pid, now: Date.now, warn: () => {} }, who);
    const next = '00000000-0000-4000-8000-0000000000e2';
    const warn: string[] = [];
    const r = checkSession(deps({ ppid: 1, start: '777', state: 'S' }, { pid: CLAUDE_PID, sessionId: next, procStart: '777' }, warn), who);
    if (r.gone) throw new Error('gone');
    expect(r.cleared).toBe(SID);
    expect(r.who).toMatchObject({ id: next, sessionId: next, from: `claude:${next}`, pid: CLAUDE_PID });
    expect(readLedger(bus.root, next).state).toBe('ok');
    expect(readLedger(bus.root, SID).state).toBe('missing');
    expect(readSensor(bus.root, next)?.pid).toBe(process.pid);
    expect(readSensor(bus.root, SID)).toBeNull();
    expect(readPresence(bus.root).filter((p) => p.role === 'sensor').map((p) => p.id)).toEqual([]);
    expect(warn).toEqual([`attend: followed /clear from ${SID} to ${next}`]);
  });
});
