// The consumption ledger under load (the slow tier): a long history delivered at once, and a
// sustained stream of one delivery cycle per message. Bounded by count, not by time; the
// simulated clock stands for the minutes, so the deadline below is only for a loaded machine.

import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LOG_COMPACT_BYTES, ledgerFile } from '../../tools/bus/delivery/ledger-log.js';
import { VERIFY_CAP } from '../../tools/bus/trust/held.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { ids, put } from '../helpers/fixtures.js';
import { OPEN, TRAY, ledgerNow as ledgerOf, take as takeFrom } from '../helpers/ledger.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const take = (who?: Identity, consumeAll?: boolean, now?: number) => takeFrom(bus.root, who, consumeAll, now);
const ledgerNow = () => ledgerOf(bus.root);

// 12,000 cycles take about 45 s on an idle two-core machine.
const SOAK_MS = 600_000;

describe('consumption ledger', () => {
  it('stays small however long the history: watermarks, plus only the recent ids', () => {
    const t0 = Date.now() - 600_000;
    // The ledger began before the history was written (ids are back-dated here).
    take(undefined, true, t0 - 1_000);
    let clock = t0;
    const mk = ids(() => clock);
    for (let i = 0; i < 3000; i++) {
      clock = t0 + i * 100;
      put(bus.root, mk, { scope: i % 2 ? OPEN : TRAY, to: i % 2 ? '*' : 'sid-a', body: `m${i}` });
    }
    // These are unsigned (written by hand), so a pass verifies a bounded number of them
    // (VERIFY_CAP, tools/bus/trust/held.ts) and says how many it left; the passes together
    // take all 3000, each once.
    const taken: string[] = [];
    for (let pass = 0; pass <= 3000 / VERIFY_CAP; pass++) {
      const p = take().pending;
      taken.push(...p.fresh.map((m) => m.id));
      if (p.unchecked === undefined) break;
    }
    expect(new Set(taken).size).toBe(3000);
    expect(taken).toHaveLength(3000);
    expect(JSON.stringify(ledgerNow()).length).toBeLessThan(2_000);
    expect(take().pending.fresh).toEqual([]);
  });

  it('at 20 messages/s sustained for 10 minutes, the consumed ids kept cover the grace window, not minutes (issue #12 §5)', () => {
    // Simulated time: messages 50 ms apart, one delivery cycle per message, the index trusted
    // between the full listings it asks for (every RECONCILE_MS).
    const t0 = Date.now() - 700_000;
    let clock = t0;
    const mk = ids(() => clock);
    take(undefined, true, clock);
    let maxAbove = 0;
    let maxBytes = 0;
    let maxLog = 0;
    let delivered = 0;
    for (let i = 0; i < 12_000; i++) {
      clock = t0 + i * 50;
      put(bus.root, mk, { scope: OPEN, to: '*', body: `m${i}` });
      delivered += take(undefined, true, clock + 1).pending.fresh.length;
      if (i % 100 === 99) {
        const l = ledgerNow();
        maxAbove = Math.max(maxAbove, l.above.length);
        maxBytes = Math.max(maxBytes, JSON.stringify(l).length);
        // The log each cycle appends to is rewritten as its last line once it grows past the bound.
        maxLog = Math.max(maxLog, statSync(ledgerFile(bus.root, 'sid-a')).size);
      }
    }
    expect(delivered).toBe(12_000);
    // 30 s of grace at 20/s is 600 ids; a full listing's minutes would be thousands.
    expect(maxAbove).toBeLessThanOrEqual(650);
    expect(maxBytes).toBeLessThan(650 * 26 + 2_000);
    expect(maxLog).toBeGreaterThan(0);
    expect(maxLog).toBeLessThanOrEqual(LOG_COMPACT_BYTES + maxBytes + 2);
  }, SOAK_MS);
});
