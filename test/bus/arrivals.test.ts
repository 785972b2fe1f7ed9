// Issue 21 §4/3, "late arrivals are delivered once, whatever their id says": a delivery cycle
// notices a message by its arrival (an index line, or a file the directory did not have at
// the last listing), never by the time in its id. Writers 45 s, 10 minutes and a day behind
// the reader's watermark, with an index line and by hand without one, and a relay import
// (which keeps the original id): each is delivered exactly once, and nothing on the next
// cycle. In-process over a temporary bus.

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Pending, readLedger } from '../../tools/bus/delivery/ledger.js';
import { takePending } from '../../tools/bus/delivery/take.js';
import { scopeDir, scopeDirName } from '../../tools/bus/store/layout.js';
import { createReporter, writeSignals } from '../../tools/bus/store/messages.js';
import { importMessage } from '../../tools/relay/inbound.js';
import { ImportedSet } from '../../tools/relay/store.js';
import { formatSignal } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import { ME, type TempBus, useFamilyPolicy, useTempBus } from '../helpers/temp-bus.js';
import { agent } from '../helpers/fixtures.js';

let bus: TempBus;
// About when a file is noticed, not who may reach whom: every node reaches every other.
useTempBus((b) => {
  bus = b;
  useFamilyPolicy(b);
});

const ORIGIN = '/srv/app';
const OPEN = { kind: 'open' } as const;
const TRAY = { kind: 'tray', key: attendKey(ORIGIN) } as const;
const LAGS = { '45 s': 45_000, '10 min': 600_000, '1 day': 86_400_000 } as const;

/** One delivery cycle for sid-a that consumes everything it is offered. */
function take(now = Date.now()): string[] {
  let seen: Pending | undefined;
  takePending(bus.root, agent('sid-a', ORIGIN), { now, reporter: createReporter(() => {}), warn: () => {} }, (p) => {
    seen = p;
    return { consume: p.fresh.map((m) => m.id), result: undefined };
  });
  return seen!.fresh.map((m) => m.id);
}

/** Ids minted `lag` ms behind the present, by the wire's own factory with its clock injected. */
function behind(lag: number): () => string {
  return createIdFactory({ now: () => Date.now() - lag, pid: 4242, random: Math.random });
}

const env = (body: string) => ({ from: `external:${ME}@pts-1`, project: 'proj', cwd: '/srv/proj', fromKind: 'human' as const, fromId: ME, to: '*', body });

/** A file put in place the way another tool (or an older attend) would: renamed in, no index line. */
function byHand(scope: typeof OPEN | typeof TRAY, id: string, body: string): void {
  const dir = scopeDir(bus.root, scope);
  const tmp = join(dir, `.tmp-${id}`);
  writeFileSync(tmp, `${formatSignal({ ...env(body), to: scope.kind === 'tray' ? 'sid-a' : '*' })}\n`);
  renameSync(tmp, join(dir, `${id}.signal`));
}

/** The reader has been running a while: its ledger and watermarks exist, the index is followed. */
function running(): void {
  // Something in each directory, so both have an index and a first listing behind them.
  const mk = behind(0);
  writeSignals(bus.root, [OPEN], mk(), env('before'));
  writeSignals(bus.root, [TRAY], mk(), { ...env('before'), to: 'sid-a' });
  take();
  expect(take()).toEqual([]);
}

describe('late arrivals are delivered once, whatever their id says', () => {
  for (const [name, lag] of Object.entries(LAGS)) {
    it(`an attend writer ${name} behind, with its index line`, () => {
      running();
      const id = behind(lag)();
      writeSignals(bus.root, [OPEN], id, env(`late by ${name}`));
      expect(take()).toEqual([id]);
      expect(take()).toEqual([]);
      // Past the grace window, later cycles still never show it again.
      expect(take(Date.now() + 60_000)).toEqual([]);
    });

    it(`a file written by hand ${name} behind, without an index line`, () => {
      running();
      const id = behind(lag)();
      byHand(OPEN, id, `by hand, late by ${name}`);
      // Past the settle window, the unexplained change sends the cycle to a full listing.
      expect(take(Date.now() + 200)).toEqual([id]);
      expect(take(Date.now() + 300)).toEqual([]);
      // Another unexplained change later (a second hand-written file): the first is not shown again.
      const next = behind(0)();
      byHand(TRAY, next, 'by hand, on time');
      byHand(OPEN, behind(lag)(), 'by hand, late again');
      const third = take(Date.now() + 400);
      expect(third).toHaveLength(2);
      expect(third).toContain(next);
      expect(third).not.toContain(id);
      expect(take(Date.now() + 60_000)).toEqual([]);
    });
  }

  it('hand-written files of every lag at once, into #open and the tray, each exactly once', () => {
    running();
    const want: string[] = [];
    for (const lag of Object.values(LAGS)) {
      const a = behind(lag)();
      byHand(OPEN, a, 'open');
      const b = behind(lag)();
      byHand(TRAY, b, 'tray');
      want.push(a, b);
    }
    expect(take(Date.now() + 200).sort()).toEqual(want.sort());
    expect(take(Date.now() + 300)).toEqual([]);
    expect(take(Date.now() + 700_000)).toEqual([]);
  });

  it('relay imports keep their original ids and are delivered once', async () => {
    running();
    const imported = new ImportedSet(bus.root);
    const ctx = { root: bus.root, self: 'bravo', imported, now: Date.now(), keyKnown: () => false, nodeSigns: () => false, claim: () => null, dissolved: () => null };
    const line = (body: string) => new TextEncoder().encode(`claude:0c0ffee0-1111-4222-8333-444455556666|p|/p|from_kind:agent|from_id:0c0ffee0-1111-4222-8333-444455556666|to:*|${body}\n`);
    const want: string[] = [];
    for (const [name, lag] of Object.entries(LAGS)) {
      const id = behind(lag)();
      const out = await importMessage(ctx, { subject: 'attend.v1.alpha.bcast', data: line(`imported, late by ${name}`), id, origin: 'alpha', timeMs: Date.now() - lag });
      expect(out.kind).toBe('written');
      want.push(id);
    }
    expect(take().sort()).toEqual(want.sort());
    expect(take()).toEqual([]);
    expect(take(Date.now() + 60_000)).toEqual([]);
  });

  describe('into a receive directory the last cycle did not find (a session\'s first mail)', () => {
    /** The reader runs with #open only: its tray has never been written to. */
    function runningWithoutTray(): void {
      writeSignals(bus.root, [OPEN], behind(0)(), env('before'));
      take();
      expect(take()).toEqual([]);
    }

    it('an attend writer a day behind creates the tray: delivered once', () => {
      runningWithoutTray();
      const id = behind(LAGS['1 day'])();
      writeSignals(bus.root, [TRAY], id, { ...env('first mail, a day late'), to: 'sid-a' });
      expect(take()).toEqual([id]);
      expect(take(Date.now() + 300)).toEqual([]);
      expect(take(Date.now() + 700_000)).toEqual([]);
    });

    it('files written by hand into a new tray, 45 s and a day behind: each delivered once', () => {
      runningWithoutTray();
      mkdirSync(scopeDir(bus.root, TRAY), { recursive: true });
      const a = behind(LAGS['45 s'])();
      const b = behind(LAGS['1 day'])();
      byHand(TRAY, a, 'by hand into a new tray');
      byHand(TRAY, b, 'by hand into a new tray, a day late');
      expect(take(Date.now() + 200).sort()).toEqual([a, b].sort());
      expect(take(Date.now() + 300)).toEqual([]);
      expect(take(Date.now() + 700_000)).toEqual([]);
    });

    it('a tray written only by hand so far gets its first index line from a writer a day behind: delivered once', () => {
      runningWithoutTray();
      mkdirSync(scopeDir(bus.root, TRAY), { recursive: true });
      const a = behind(0)();
      byHand(TRAY, a, 'by hand, on time');
      expect(take(Date.now() + 200)).toEqual([a]);
      const b = behind(LAGS['1 day'])();
      writeSignals(bus.root, [TRAY], b, { ...env('indexed, a day late'), to: 'sid-a' });
      expect(take(Date.now() + 300)).toEqual([b]);
      expect(take(Date.now() + 400)).toEqual([]);
      expect(take(Date.now() + 700_000)).toEqual([]);
    });

    it('a tray still missing leaves the same mark in the ledger from cycle to cycle', () => {
      runningWithoutTray();
      const index = () => {
        const r = readLedger(bus.root, 'sid-a');
        if (r.state !== 'ok') throw new Error(r.state);
        return r.ledger.index[scopeDirName(TRAY)];
      };
      const first = index();
      expect(first).toBeDefined();
      expect(take(Date.now() + 1_000)).toEqual([]);
      expect(index()).toEqual(first);
    });
  });

  it('the record of a late delivery stays bounded: gone from the ledger once no re-read can offer it', () => {
    running();
    const mk = behind(LAGS['1 day']);
    for (let i = 0; i < 20; i++) writeSignals(bus.root, [OPEN], mk(), env(`late ${i}`));
    expect(take()).toHaveLength(20);
    expect(take(Date.now() + 60_000)).toEqual([]);
    const r = readLedger(bus.root, 'sid-a');
    if (r.state !== 'ok') throw new Error(r.state);
    expect(r.ledger.late).toBeUndefined();
    expect(JSON.stringify(r.ledger).length).toBeLessThan(2_000);
  });
});
