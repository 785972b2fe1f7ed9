// The consumption ledger (docs/architecture.md, "Delivery"): one per session, shared by the sensor, the drain and
// every other process, so a message surfaced by one conduit is never surfaced by the other.
//
// Shape: per receive directory a watermark (every id below it is consumed) plus one set of
// consumed ids above the watermarks. Ids sort by creation time (tools/wire/ids.ts), so
// consulting the ledger is string comparisons on ids; only files above
// the watermark and not in the set are ever read. A watermark only moves past ids older
// than LEDGER_GRACE_MS, because a writer's id is taken a moment before its file appears:
// the set holds what is younger, so the file stays as small as the last half minute of
// traffic however long the bus's history grows.
//
// Finding the ids above a watermark without listing the directory: each directory's index
// hint (tools/bus/store/dir-index.ts) is read from the byte offset the ledger remembers, and
// trusted only while it explains every change to the directory; otherwise, and at least
// every RECONCILE_MS, the directory is listed in full. A watermark never moves past what
// the last full listing saw (less the grace window), so a file the index missed is picked up
// by the next full listing instead of being taken for consumed.
//
// Every read-modify-write happens under the ledger's lock, and the scan, the delivery and
// the record happen inside one hold of it, so two conduits never surface the same message.
// Delivery comes before the record: a crash in between repeats only the messages in flight.
//
// In parts: the log (ledger-log.ts), its older forms (ledger-legacy.ts), one delivery cycle
// and its dry run (take.ts), the walk over the receive directories (walk.ts), the plan
// (plan.ts). Here: reading a session's ledger in whatever form it is, asking it, moving it.

import { readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { dropOwnerFile, withLock } from '../store/lock.js';
import { ledgerIdOfName, legacyLedgerFile, plainLedgerFile, readLegacyLedger } from './ledger-legacy.js';
import { type LedgerRead, forgetKept, ledgerDir, ledgerFile, ledgerLock, readLog, sessionLedgerDir, writeLedger } from './ledger-log.js';
import { consumedIn, parseLedger } from './plan.js';

export { COLD_ADDRESSED_MAX, COLD_RECENT_MS, LEDGER_GRACE_MS, type Invited, type Ledger, type Pending, noteShown } from './plan.js';

/** A session's ledger: the last complete line of its log, else an older form it was kept in. */
export function readLedger(root: string, sid: string): LedgerRead {
  const log = readLog(ledgerFile(root, sid));
  if (log !== undefined) {
    const ledger = log === null ? null : parseLedger(log);
    return ledger ? { state: 'ok', ledger } : { state: 'corrupt', file: ledgerFile(root, sid) };
  }
  return readLegacyLedger(root, sid);
}

/** Remove a session's ledger in every form it may have: the log and the older single files. */
function unlinkLedger(root: string, sid: string): void {
  for (const f of [ledgerFile(root, sid), plainLedgerFile(root, sid), legacyLedgerFile(root, sid)]) {
    try {
      unlinkSync(f);
    } catch {
      // not there
    }
  }
}

/** Remove a session's ledger directory once its ledger is gone and its lock released. */
function removeLedgerDir(root: string, sid: string): void {
  // This process's own lock owner file is there if it took the lock (moveLedger did).
  dropOwnerFile(sessionLedgerDir(root, sid));
  try {
    rmdirSync(sessionLedgerDir(root, sid));
  } catch {
    // not empty (its lock is held) or gone
  }
}

/** Has `sid`'s ledger consumed message `id` of directory `dirName`? No ledger: no. */
export function isConsumedBy(root: string, sid: string, dirName: string, id: string): boolean {
  const r = readLedger(root, sid);
  return r.state === 'ok' && consumedIn(r.ledger, dirName, id);
}

/** Every identity that has a ledger (what has ever been delivered to). */
export function listLedgerIds(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(ledgerDir(root));
  } catch {
    return [];
  }
  const ids = new Set<string>();
  for (const n of names) {
    if (n.startsWith('.')) continue;
    try {
      ids.add(ledgerIdOfName(n));
    } catch {
      // not a name attend made
    }
  }
  return [...ids].filter((id) => readLedger(root, id).state !== 'missing');
}

/**
 * `/clear` gives the Claude process a new session id (docs/architecture.md, "Identity"): the ledger follows it, so
 * nothing already surfaced is surfaced again. A ledger already at the new id wins.
 */
export function moveLedger(root: string, fromSid: string, toSid: string): boolean {
  if (fromSid === toSid) return false;
  const moved = withLock(ledgerLock(root, fromSid), () => {
    const read = readLedger(root, fromSid);
    if (read.state !== 'ok' || readLedger(root, toSid).state === 'ok') return false;
    read.ledger.sid = toSid;
    writeLedger(root, read.ledger);
    forgetKept(ledgerFile(root, fromSid));
    unlinkLedger(root, fromSid);
    return true;
  });
  // The lock is released by now: the old session's directory can go.
  if (moved) removeLedgerDir(root, fromSid);
  return moved;
}
