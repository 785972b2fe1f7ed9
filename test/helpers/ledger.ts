// One delivery cycle against a session's consumption ledger, as the sensor and the drain run
// it, for the ledger tests (test/bus/ledger.test.ts) and its soak (test/slow/ledger.test.ts).

import { type Pending, readLedger } from '../../tools/bus/delivery/ledger.js';
import { takePending } from '../../tools/bus/delivery/take.js';
import { createReporter } from '../../tools/bus/store/messages.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { attendKey } from '../../tools/wire/names.js';
import { agent } from './fixtures.js';

export const ORIGIN = '/srv/app';
export const TRAY = { kind: 'tray', key: attendKey(ORIGIN) } as const;
export const OPEN = { kind: 'open' } as const;

/** One cycle for `who` (sid-a by default): what was pending, consuming all of it unless told not to. */
export function take(root: string, who: Identity = agent('sid-a', ORIGIN), consumeAll = true, now = Date.now()) {
  const warnings: string[] = [];
  const skipped: string[] = [];
  let seen: Pending | undefined;
  takePending(root, who, { now, reporter: createReporter((l) => skipped.push(l)), warn: (l) => warnings.push(l) }, (p) => {
    seen = { ...p, fresh: [...p.fresh] };
    return { consume: consumeAll ? p.fresh.map((m) => m.id) : [], result: undefined };
  });
  return { pending: seen!, warnings, skipped };
}

/** sid-a's ledger as the next cycle would read it (the last line of its log). */
export function ledgerNow(root: string) {
  const r = readLedger(root, 'sid-a');
  if (r.state !== 'ok') throw new Error(`ledger ${r.state}`);
  return r.ledger;
}
