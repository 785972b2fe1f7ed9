// A wake in flight (issue 21 §6, tools/bus/delivery/take.ts): every conduit records the ids it
// is about to show, and who it is (pid and process start time), before it shows them, and
// confirms them after. While the owner lives its wake counts as shown for every conduit on the
// ledger; once the owner is gone unconfirmed, the wake is offered again and said to be a
// possible repeat. In-process over a temporary bus: a conduit "killed between its record and
// its confirm" is the log as it was at that moment, with an owner that cannot be alive. The
// real SIGKILL is test/e2e/ledger-inflight.test.ts; the real full disk, test/e2e/full-disk.test.ts.

import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { moveLedger, readLedger, shownByOf } from '../../tools/bus/delivery/ledger.js';
import { type Ledger, VIA_MAX, noteVia, viaOf } from '../../tools/bus/delivery/plan.js';
import { scopeDirName } from '../../tools/bus/store/layout.js';
import { LOG_COMPACT_BYTES, flightOf, ledgerFile, readLog, sessionLedgerDir } from '../../tools/bus/delivery/ledger-log.js';
import { peekPending, takePending } from '../../tools/bus/delivery/take.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import { drainOnce } from '../../tools/drain/drain.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { createDeliveryLoop } from '../../tools/sensor/delivery.js';
import { postOnce } from '../../tools/sensor/post-wake.js';
import { scanOnce } from '../../tools/sensor/scan.js';
import { pushPending } from '../../tools/mcp/channel.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { nameLookup } from '../../tools/wire/display.js';
import { agent, headerIds, ids, put } from '../helpers/fixtures.js';
import { OPEN, ORIGIN, TRAY } from '../helpers/ledger.js';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

/** A pid no process can have (above the kernel's pid_max). */
const GONE = 4194304999;

const me = (sid = 'sid-a') => agent(sid, ORIGIN);
const opts = () => ({ now: Date.now(), reporter: silentReporter, warn: () => {} });
const freshIds = (who: Identity) => peekPending(bus.root, who, opts()).fresh.map((m) => m.id);

/** One sensor wake; `printing` is called as each line is printed. */
function wake(who: Identity, printing?: () => void) {
  const lines: string[] = [];
  const write = (l: string) => {
    printing?.();
    lines.push(l);
  };
  const r = scanOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (m) => nameLookup([], m), write, warn: () => {} }, who);
  return { r, lines, ids: headerIds(lines.join('\n')) };
}

function drain(who: Identity) {
  const out: string[] = [];
  const r = drainOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (m) => nameLookup([], m), write: (t) => void out.push(t), warn: () => {} }, who, { stopHookActive: false }, 'plain');
  return { r, text: out.join('') };
}

/**
 * A sensor wake that is "killed" between its record and its confirm: the log's last line as
 * the wake's emit found it (in flight), appended again once the wake is over, with its owner
 * made `owner` (a pid that is gone, or this very process, whose confirm did not land).
 */
function killedWake(who: Identity, owner: 'gone' | 'alive') {
  let inFlight = '';
  const shown = wake(who, () => {
    inFlight ||= readLog(ledgerFile(bus.root, who.id)) ?? '';
  });
  const line = owner === 'gone' ? inFlight.replace(/"pid":\d+,"start":"[^"]*"/, `"pid":${GONE},"start":"1"`) : inFlight;
  appendFileSync(ledgerFile(bus.root, who.id), `\n${line}\n`);
  return { shown, line };
}

describe('a wake in flight', () => {
  it('is recorded, with its ids and its owner, before a line is printed, and confirmed after', () => {
    const who = me();
    wake(who);
    const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'recorded first' });
    const seen: { flight: ReturnType<typeof flightOf>; fresh: string[] }[] = [];
    const r = wake(who, () => {
      seen.push({ flight: flightOf(readLog(ledgerFile(bus.root, who.id)) ?? ''), fresh: freshIds(who) });
    });
    expect(r.r.delivered).toEqual([a]);
    // At the first line printed, the log already named the wake and this process as its owner,
    // and another reader (attend status) did not count the message unread.
    expect(seen[0]!.flight).toMatchObject({ ids: [a], pid: process.pid, st: 'f' });
    expect(seen[0]!.fresh).toEqual([]);
    // Once out, confirmed in place: the last line says shown.
    expect(flightOf(readLog(ledgerFile(bus.root, who.id)) ?? '')?.st).toBe('c');
    const read = readLedger(bus.root, who.id);
    expect(read.state === 'ok' && read.ledger.above.includes(a)).toBe(true);
    expect(wake(who).ids).toEqual([]);
    expect(drain(who).r.reason).toBe('nothing-pending');
  });

  it('whose owner was killed before confirming it is offered again, said to be a possible repeat, and then shown once', () => {
    const who = me();
    wake(who);
    const mk = ids();
    const a = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'in flight at the kill' });
    const b = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'in flight too' });
    const { shown } = killedWake(who, 'gone');
    expect(shown.ids).toEqual([a, b]);
    // Not lost: the next conduit offers both again, with the note that they may repeat.
    const c = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'new since' });
    const again = wake(who);
    expect(again.ids).toEqual([a, b, c]);
    expect(again.lines[0]).toBe('[attend] 2 messages below may repeat (a conduit stopped while showing them)');
    // And once: the wake that offered them again confirmed them.
    expect(wake(who).ids).toEqual([]);
  });

  it('whose owner was killed is offered again by the drain too, with the same note', () => {
    const who = me();
    drain(who);
    const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'the sensor died showing this' });
    killedWake(who, 'gone');
    const d = drain(who);
    expect(d.r.shown).toEqual([a]);
    expect(d.text).toContain('[attend] 1 message below may repeat (a conduit stopped while showing it)');
    expect(drain(who).r.reason).toBe('nothing-pending');
  });

  it('whose owner lives and whose confirm did not land counts as shown for every conduit, and the next cycle writes it', () => {
    const who = me();
    wake(who);
    const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'shown, confirm lost' });
    killedWake(who, 'alive');
    expect(flightOf(readLog(ledgerFile(bus.root, who.id)) ?? '')?.st).toBe('f');
    // The Stop hook does not show it a second time, nor does the sensor.
    expect(drain(who).r.reason).toBe('nothing-pending');
    expect(wake(who).ids).toEqual([]);
    // The drain's cycle wrote the confirmation as a line of its own: nothing in flight is left.
    const log = readLog(ledgerFile(bus.root, who.id)) ?? '';
    expect(flightOf(log)).toBeUndefined();
    const read = readLedger(bus.root, who.id);
    expect(read.state === 'ok' && read.ledger.above.includes(a)).toBe(true);
  });

  it('a wake the conduit could not show is withdrawn; one shown in part keeps the rest pending', () => {
    const who = me();
    wake(who);
    const mk = ids();
    const a = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'one' });
    const b = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'two' });
    // Refused whole (a post the session held): withdrawn in place, both pending, no note.
    takePending(bus.root, who, opts(), (p) => ({ consume: p.fresh.map((m) => m.id), result: undefined, emit: () => p.fresh.map((m) => m.id) }));
    expect(flightOf(readLog(ledgerFile(bus.root, who.id)) ?? '')?.st).toBe('x');
    expect(freshIds(who)).toEqual([a, b]);
    // Shown in part (a stdout that closed after the first message): the first is recorded.
    takePending(bus.root, who, opts(), (p) => ({ consume: p.fresh.map((m) => m.id), result: undefined, emit: () => [b] }));
    expect(freshIds(who)).toEqual([b]);
    // A conduit that throws while showing shows nothing it counts: pending still.
    expect(() =>
      takePending(bus.root, who, opts(), (p) => ({
        consume: p.fresh.map((m) => m.id),
        result: undefined,
        emit: () => {
          throw new Error('EPIPE');
        },
      })),
    ).toThrow('EPIPE');
    const next = wake(who);
    expect(next.ids).toEqual([b]);
    expect(next.lines.some((l) => l.includes('may repeat'))).toBe(false);
  });

  it('compacts the log once the wake in flight is settled, off the path to the line: its confirm is the ledger', () => {
    const who = me();
    wake(who);
    // Empty lines (readers pass over them) past the compaction size: the next wake's settling compacts.
    appendFileSync(ledgerFile(bus.root, who.id), '\n'.repeat(LOG_COMPACT_BYTES));
    const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'after the compaction' });
    expect(wake(who).ids).toEqual([a]);
    expect(statSync(ledgerFile(bus.root, who.id)).size).toBeLessThan(LOG_COMPACT_BYTES);
    expect(flightOf(readLog(ledgerFile(bus.root, who.id)) ?? '')?.st).toBe('c');
    expect(wake(who).ids).toEqual([]);
  });

  it('moves with the ledger after /clear as what it is: shown while its owner lives, pending once it is gone', () => {
    const mk = ids();
    const live = me('sid-live');
    wake(live);
    // #open, which the session reads under its new id too.
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'shown before the clear' });
    expect(killedWake(live, 'alive').shown.ids).toEqual([a]);
    expect(moveLedger(bus.root, 'sid-live', 'sid-live-2')).toBe(true);
    expect(freshIds(me('sid-live-2'))).not.toContain(a);

    const dead = me('sid-dead');
    wake(dead);
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'in flight at the clear' });
    expect(killedWake(dead, 'gone').shown.ids).toContain(b);
    expect(moveLedger(bus.root, 'sid-dead', 'sid-dead-2')).toBe(true);
    expect(freshIds(me('sid-dead-2'))).toContain(b);
  });

  it('an in-flight field that does not parse is no wake in flight; the ledger around it still reads', () => {
    const who = me();
    wake(who);
    const file = ledgerFile(bus.root, who.id);
    const line = readLog(file)!;
    writeFileSync(file, `${line.slice(0, -1)},"inflight":{"ids":["not an id!"],"pid":1,"start":"x","st":"f"}}\n`);
    expect(flightOf(readFileSync(file, 'utf8').trim())).toBeUndefined();
    expect(readLedger(bus.root, who.id).state).toBe('ok');
  });
});

describe('every conduit', () => {
  /** What the log said at the moment a conduit showed its wake: read from inside its print. */
  const atShow = (who: Identity) => flightOf(readLog(ledgerFile(bus.root, who.id)) ?? '');
  type Seen = ReturnType<typeof atShow>;
  const conduits: [string, (who: Identity, saw: (f: Seen) => void) => Promise<unknown>][] = [
    ['the sensor', async (who, saw) => wake(who, () => saw(atShow(who)))],
    [
      'the drain',
      async (who, saw) =>
        drainOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (m) => nameLookup([], m), write: () => saw(atShow(who)), warn: () => {} }, who, { stopHookActive: false }, 'plain'),
    ],
    [
      'the deliverer',
      (who, saw) =>
        postOnce(
          {
            root: bus.root,
            now: Date.now,
            reporter: silentReporter,
            names: (m) => nameLookup([], m),
            warn: () => {},
            post: async () => saw(atShow(who)),
            replyTo: 'uds:/nowhere',
            newMsgId: () => 'post-1',
          },
          who,
        ),
    ],
    ['the MCP channel push', async (who, saw) => pushPending(createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid }), who, { emit: () => saw(atShow(who)), warn: () => {}, names: () => new Map() })],
  ];

  it.each(conduits)('%s shows a wake only once it is recorded in flight, and confirms it after', async (_name, run) => {
    const who = me();
    await run(who, () => {});
    const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'for every conduit' });
    const seen: Seen[] = [];
    await run(who, (f) => seen.push(f));
    expect(seen.length).toBeGreaterThan(0);
    for (const f of seen) expect(f).toMatchObject({ ids: [a], pid: process.pid, st: 'f' });
    expect(atShow(who)?.st).toBe('c');
    expect(freshIds(who)).toEqual([]);
  });
});

describe('the sensor loop on a wake that fails', () => {
  it('tries again by itself, with no new message to wake it, and says once that it failed and once that it recovered', async () => {
    const who = me();
    const warnings: string[] = [];
    const lines: string[] = [];
    let attempts = 0;
    const tries = () => attempts;
    const loop = createDeliveryLoop({
      scan: {
        root: bus.root,
        now: Date.now,
        reporter: silentReporter,
        names: (m) => nameLookup([], m),
        write: (l) => void lines.push(l),
        warn: (l) => void warnings.push(l),
      },
      who: () => {
        attempts++;
        return who;
      },
      stopping: () => false,
      closed: () => {},
    });
    try {
      loop.wake();
      const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'waits out the failure' });
      // The session's ledger directory is a file: no cycle can take its lock (ENOTDIR).
      const dir = sessionLedgerDir(bus.root, who.id);
      rmSync(dir, { recursive: true, force: true });
      writeFileSync(dir, 'not a directory');
      loop.wake();
      expect(lines).toEqual([]);
      // Tried again (more than once) while it fails, said once.
      await waitFor(() => tries() >= 2, { what: 'the retries' });
      expect(warnings.filter((w) => w.startsWith('attend: scan failed'))).toHaveLength(1);
      rmSync(dir);
      mkdirSync(dir);
      await waitFor(() => headerIds(lines.join('\n')).includes(a), { what: 'the retry' });
      expect(warnings.filter((w) => w.startsWith('attend: scan failed'))).toHaveLength(1);
      expect(warnings).toContain('attend: delivery recovered');
    } finally {
      loop.close();
    }
  });
});

describe('which conduit showed a message (issue 24: recorded with the wake, not read from presence)', () => {
  it('is written in the record in flight, before a line is printed, and kept in the ledger once confirmed', () => {
    const who = me();
    wake(who);
    const mk = ids();
    const a = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'by the sensor' });
    let flight: ReturnType<typeof flightOf>;
    wake(who, () => void (flight ??= flightOf(readLog(ledgerFile(bus.root, who.id)) ?? '')));
    expect(flight).toMatchObject({ ids: [a], by: 'sensor', st: 'f' });
    const b = put(bus.root, mk, { scope: TRAY, to: who.id, body: 'by the Stop hook' });
    expect(drain(who).text).toContain('by the Stop hook');
    // No presence record says anything here: the ledger alone names both, after later cycles rewrote it.
    put(bus.root, mk, { scope: TRAY, to: who.id, body: 'a later one' });
    wake(who);
    const shown = shownByOf(bus.root, who.id);
    expect(shown(scopeDirName(TRAY), a)).toEqual({ shown: true, by: 'sensor', kept: true });
    expect(shown(scopeDirName(TRAY), b)).toEqual({ shown: true, by: 'Stop hook', kept: true });
    expect(shown(scopeDirName(TRAY), mk())).toEqual({ shown: false, kept: true });
  });

  it('reads a ledger and a record from before it was kept as they read before, saying the conduit is not known', () => {
    const who = me();
    wake(who);
    const a = put(bus.root, ids(), { scope: TRAY, to: who.id, body: 'old record' });
    const read = readLedger(bus.root, who.id);
    if (read.state !== 'ok') throw new Error('no ledger');
    const { via: _, ...old } = read.ledger;
    appendFileSync(ledgerFile(bus.root, who.id), `\n${JSON.stringify({ ...old, inflight: { ids: [a], pid: process.pid, start: '1', st: 'c' } })}\n`);
    const again = readLedger(bus.root, who.id);
    expect(again.state === 'ok' && again.ledger.above.includes(a)).toBe(true);
    expect(shownByOf(bus.root, who.id)(scopeDirName(TRAY), a)).toEqual({ shown: true, kept: false });
    expect(wake(who).ids).toEqual([]);
  });

  it('keeps the conduits of the newest VIA_MAX shown ids only: the line stays small', () => {
    const mk = ids();
    const l = { via: undefined } as unknown as Ledger;
    const first = Array.from({ length: VIA_MAX }, () => mk());
    noteVia(l, 'sensor', first);
    const later = [mk(), mk()];
    noteVia(l, 'Stop hook', later);
    expect(Object.values(l.via ?? {}).flat()).toHaveLength(VIA_MAX);
    expect(viaOf(l, first[0]!)).toBeUndefined();
    expect(viaOf(l, first[2]!)).toBe('sensor');
    expect(viaOf(l, later[1]!)).toBe('Stop hook');
  });
});
