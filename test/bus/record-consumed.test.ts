// recordConsumed keeps the consumed set above the watermarks ascending and searches it
// (issue 25: a Set made and sorted again per wake cost a third of a millisecond on the path
// to the line). Property: whatever order a ledger read from disk has its ids in, the result
// is what the set-and-sort it replaced gave: the same watermarks, the same consumed ids, the
// same index positions.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { type DirListing, LEDGER_GRACE_MS, newLedger, recordConsumed } from '../../tools/bus/delivery/plan.js';
import { createIdFactory, idFloor } from '../../tools/wire/ids.js';

const NOW = 1_796_300_000_000;

/** recordConsumed's watermarks and consumed set as the set-and-sort computed them. */
function reference(above: string[], marks: Record<string, string>, dirs: DirListing[], consumed: string[]): { marks: Record<string, string>; above: string[] } {
  const set = new Set([...above, ...consumed]);
  const next = { ...marks };
  for (const d of dirs) {
    const old = next[d.dirName];
    let mark = idFloor(NOW - LEDGER_GRACE_MS);
    for (const id of d.ids) {
      if (old !== undefined && id < old) continue;
      if (!set.has(id)) {
        if (id < mark) mark = id;
        break;
      }
    }
    if (old === undefined || mark > old) next[d.dirName] = mark;
  }
  const current = new Set(dirs.map((d) => d.dirName));
  for (const dir of Object.keys(next)) if (!current.has(dir)) delete next[dir];
  const floor = Object.values(next).reduce<string | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined) ?? '';
  return { marks: next, above: [...set].filter((id) => id >= floor).sort() };
}

describe('recordConsumed', () => {
  it('moves the watermarks and keeps the consumed ids as the set-and-sort did, whatever order the ledger had', () => {
    // Ids over the last minute: half of them inside the grace window, half below it.
    const pool = fc.array(fc.integer({ min: 0, max: 60_000 }), { minLength: 1, maxLength: 60 }).map((ages) => {
      let t = 0;
      const newId = createIdFactory({ now: () => NOW - (ages[t++ % ages.length] ?? 0), pid: 7, random: Math.random });
      return ages.map(() => newId());
    });
    fc.assert(
      fc.property(pool, fc.func(fc.integer({ min: 0, max: 3 })), fc.boolean(), (ids, pick, twice) => {
        // Each id: consumed before (0), consumed now (1), listed and pending (2), or nowhere (3).
        const before = ids.filter((id, i) => pick(id, i) === 0);
        // Newest first: a cycle's consumed ids come in any order.
        const now = ids.filter((id, i) => pick(id, i) === 1).reverse();
        const listed = [...ids.filter((id, i) => pick(id, i) !== 3)].sort();
        const dirs: DirListing[] = [
          { scope: { kind: 'open' }, dirName: '_broadcast', ids: listed },
          { scope: { kind: 'tray', key: 'k' }, dirName: 'k', ids: listed.filter((_, i) => i % 2 === 0) },
        ];
        const ledger = newLedger('s', NOW);
        // As a ledger read from disk may hold them: out of order, one twice (a folded wake).
        ledger.above = [...before, ...before.slice(0, 1)].reverse();
        ledger.marks = { _broadcast: idFloor(NOW - 50_000), gone: idFloor(NOW - 40_000) };
        const want = reference(ledger.above, ledger.marks, dirs, now);
        if (twice) {
          // A wake in flight: what was never going to be shown first, the shown part after.
          const half = Math.floor(now.length / 2);
          recordConsumed(ledger, dirs, now.slice(0, half), NOW);
          recordConsumed(ledger, dirs, now.slice(half), NOW);
        } else recordConsumed(ledger, dirs, now, NOW);
        expect(ledger.marks).toEqual(want.marks);
        expect(ledger.above).toEqual(want.above);
      }),
      { numRuns: 300 },
    );
  });
});
