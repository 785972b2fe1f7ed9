// The consumption ledger's older forms, read until a cycle writes the log in their place
// (tools/bus/delivery/ledger-log.ts) and removed then: one JSON file per session rewritten by
// rename (attend 0.4 to 0.6), and before that one file per session in the ledger directory.

import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type LedgerRead, ledgerDir, sessionLedgerDir } from './ledger-log.js';
import { parseLedger } from './plan.js';

/** Where attend 0.4 to 0.6 kept the ledger (one JSON file, rewritten by rename): read when there is no log. */
export function plainLedgerFile(root: string, sid: string): string {
  return join(sessionLedgerDir(root, sid), 'ledger.json');
}

/** Where an attend before 0.4 kept the ledger: read when the new place has none. */
export function legacyLedgerFile(root: string, sid: string): string {
  return join(ledgerDir(root), `${encodeURIComponent(sid)}.json`);
}

/** The ledger in the first older form there is; `missing` when there is none. */
export function readLegacyLedger(root: string, sid: string): LedgerRead {
  for (const f of [plainLedgerFile(root, sid), legacyLedgerFile(root, sid)]) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const ledger = parseLedger(text);
    return ledger ? { state: 'ok', ledger, legacy: f } : { state: 'corrupt', file: f };
  }
  return { state: 'missing' };
}

/** The older form a ledger was read from, once the log holds it. */
export function retireLegacy(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

/** The id a name in the ledger directory stands for: a session's directory, or a pre-0.4 `<sid>.json`. */
export function ledgerIdOfName(name: string): string {
  return decodeURIComponent(name.endsWith('.json') ? name.slice(0, -'.json'.length) : name);
}
