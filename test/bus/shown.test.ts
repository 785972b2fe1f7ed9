// What counts as shown for retention (tools/bus/delivery/shown.ts, issue 21 §4): the consumed
// set, or below a watermark that went over the message while it was there, after the party
// began reading it. Pure, table-driven over hand-made ledgers.

import { describe, expect, it } from 'vitest';
import { type ShownQuery, shownVerdict } from '../../tools/bus/delivery/index.js';
import { newLedger } from '../../tools/bus/delivery/plan.js';
import { createIdFactory, idFloor } from '../../tools/wire/ids.js';

const T = Date.UTC(2030, 0, 1);
const MIN = 60_000;
const idAt = (t: number) => createIdFactory({ now: () => t, pid: 42, random: () => 0.5 })();

/** A ledger begun at `created` whose watermark for `dir` is at `markAt`, with `above` consumed. */
function ledger(created: number, markAt: number, above: string[] = [], late: Record<string, number> = {}) {
  const l = newLedger('bot-x', created);
  l.marks = { _broadcast: idFloor(markAt), '@ops': idFloor(markAt), 'tray-k': idFloor(markAt) };
  l.above = above;
  if (Object.keys(late).length > 0) l.late = late;
  return { state: 'ok' as const, ledger: l };
}

const m = (t: number, extra: Partial<ShownQuery> = {}): ShownQuery => ({ id: idAt(t), time: t, arrived: t + 5, dirName: '_broadcast', kind: 'open', ...extra });

describe('shownVerdict', () => {
  const cases: [string, ReturnType<typeof ledger> | { state: 'missing' }, ShownQuery, string][] = [
    ['no ledger: nothing was shown', { state: 'missing' }, m(T), 'no-ledger'],
    ['above the watermark, not consumed: still to come', ledger(T - 10 * MIN, T - MIN), m(T), 'not-yet'],
    ['in the consumed set above the watermark', ledger(T - 10 * MIN, T - MIN, [idAt(T)]), m(T), 'shown'],
    ['below a watermark that passed it after it came', ledger(T - 10 * MIN, T + 10 * MIN), m(T), 'shown'],
    ['below the watermark, but it came after the watermark could have passed it', ledger(T - 10 * MIN, T + 10 * MIN), m(T, { arrived: T + 5 * MIN }), 'arrived-late'],
    ['a late arrival consumed in the grace window', ledger(T - 10 * MIN, T + 10 * MIN, [], { [idAt(T)]: T + 5 * MIN }), m(T, { arrived: T + 5 * MIN }), 'shown'],
    ['there before the ledger began: every move of the mark came after it', ledger(T + 10 * MIN, T + 20 * MIN), m(T + 9 * MIN, { arrived: T + 9.5 * MIN }), 'shown'],
    ['older than the cold-start window the ledger began with', ledger(T + 10 * MIN, T + 20 * MIN), m(T), 'before-ledger'],
    ['addressed mail: a cold start shows it whatever its age', ledger(T + 10 * MIN, T + 20 * MIN), m(T, { dirName: 'tray-k', kind: 'tray', addressed: true }), 'shown'],
    ['a channel: nothing before the join was shown', ledger(T - 60 * MIN, T + 20 * MIN), m(T, { dirName: '@ops', kind: 'channel', joined: T + MIN }), 'before-ledger'],
    ['a channel: after the join, below the watermark', ledger(T - 60 * MIN, T + 20 * MIN), m(T, { dirName: '@ops', kind: 'channel', joined: T - MIN }), 'shown'],
  ];
  it.each(cases)('%s', (_what, read, q, want) => {
    expect(shownVerdict(read, q)).toBe(want);
  });
});
