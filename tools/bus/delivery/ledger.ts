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
// A wake is recorded in flight before it is shown and confirmed after (issue 21 §6,
// ledger-log.ts InFlight): a record that cannot be written shows nothing, and a wake whose
// conduit died before confirming it is offered again (a possible repeat, never a loss).
//
// In parts: the log (ledger-log.ts), its older forms (ledger-legacy.ts), one delivery cycle
// and its dry run (take.ts), the walk over the receive directories (walk.ts), the plan
// (plan.ts). Here: reading a session's ledger in whatever form it is, asking it, moving it.

import { readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { dropOwnerFile, withLock } from '../store/lock.js';
import { ledgerIdOfName, legacyLedgerFile, plainLedgerFile, readLegacyLedger } from './ledger-legacy.js';
import { processAlive } from '../../identity/system.js';
import { type LedgerRead, flightOf, forgetKept, ledgerDir, ledgerFile, ledgerLock, readLog, sessionLedgerDir, writeLedger } from './ledger-log.js';
import { type Ledger, consumedIn, noteVia, parseLedger, viaOf } from './plan.js';

export { COLD_ADDRESSED_MAX, COLD_RECENT_MS, LEDGER_GRACE_MS, type Invited, type Ledger, type Pending, noteShown } from './plan.js';

/** A session's ledger: the last complete line of its log, else an older form it was kept in. */
export function readLedger(root: string, sid: string): LedgerRead {
  const log = readLog(ledgerFile(root, sid));
  if (log !== undefined) {
    const ledger = log === null ? null : parseLedger(log);
    if (log === null || !ledger) return { state: 'corrupt', file: ledgerFile(root, sid) };
    // A wake the line had in flight: shown (its ids are consumed), withdrawn (they are not),
    // or still in flight, for the reader to judge by its owner (settleRead).
    const flight = flightOf(log);
    if (flight?.st === 'c') {
      addConsumed(ledger, flight.ids);
      noteVia(ledger, flight.by, flight.ids);
    }
    return flight?.st === 'f' ? { state: 'ok', ledger, flight } : { state: 'ok', ledger };
  }
  return readLegacyLedger(root, sid);
}

function addConsumed(ledger: Ledger, ids: string[]): void {
  const have = new Set(ledger.above);
  // A new list, never the old one changed in place (plan.ts keeps which lists are ascending).
  ledger.above = [...ledger.above, ...ids.filter((id) => !have.has(id))];
  // A given-back id a wake then showed is consumed again, not pending (Ledger.back).
  if (ledger.back) {
    const taken = new Set(ids);
    ledger.back = ledger.back.filter((b) => !taken.has(b.id));
    if (ledger.back.length === 0) delete ledger.back;
  }
}

/**
 * A wake a read found in flight (issue 21 §6): while its owner lives it counts as shown (the
 * owner printed it and its confirm did not land, or is about to), and its ids are folded into
 * the ledger as consumed, so no conduit shows them twice; `folded` says the ledger must be
 * written for that to last. Once its owner is gone (killed between record and confirm),
 * nobody can say whether it printed them: they stay pending, and `again` names them, so
 * the conduit that offers them again can say they may repeat.
 */
export function settleRead(read: LedgerRead, alive: (pid: number, start: string) => boolean = processAlive): { folded: boolean; again?: ReadonlySet<string> } {
  if (read.state !== 'ok' || read.flight === undefined) return { folded: false };
  const f = read.flight;
  if (alive(f.pid, f.start)) {
    addConsumed(read.ledger, f.ids);
    noteVia(read.ledger, f.by, f.ids);
    return { folded: true };
  }
  return { folded: false, again: new Set(f.ids) };
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

/**
 * Whether `sid` has been shown message `id` of `dirName`, and by which conduit when its ledger
 * kept that (the in-flight record's `by`, for its newest VIA_MAX shown ids). `kept` is false
 * for a ledger from before conduits were kept: a reader may then say what it knows instead.
 */
export interface ShownBy {
  shown: boolean;
  by?: string;
  kept: boolean;
}

/** Has `sid` been shown message `id` of `dirName`, and by which conduit; its ledger read once for many messages (no ledger: not shown). */
export function shownByOf(root: string, sid: string): (dirName: string, id: string) => ShownBy {
  const r = readLedger(root, sid);
  if (r.state !== 'ok') return () => ({ shown: false, kept: true });
  // A wake in flight whose owner lives is shown already (settleRead), by its conduit.
  settleRead(r);
  const ledger = r.ledger;
  return (dirName, id) => {
    if (!consumedIn(ledger, dirName, id)) return { shown: false, kept: true };
    const by = viaOf(ledger, id);
    return { shown: true, ...(by !== undefined ? { by } : {}), kept: ledger.via !== undefined };
  };
}

/**
 * The conduit that showed it, for a reader: the ledger's own record, or for a ledger from
 * before conduits were kept, what delivers to them now (`current`, asked only then).
 */
export function conduitShown(s: ShownBy, current: () => string | undefined): string | undefined {
  return s.shown ? (s.by ?? (s.kept ? undefined : current())) : undefined;
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
    // A wake in flight moves as what it is: shown while its owner lives, else pending.
    settleRead(read);
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
