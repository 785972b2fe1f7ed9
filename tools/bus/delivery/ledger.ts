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

import { type Dir, closeSync, fstatSync, openSync, opendirSync, readdirSync, readFileSync, renameSync, rmdirSync, unlinkSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { isMessageId } from '../../wire/ids.js';
import { fileStamp, readAll, statStamp, writeAll, writeError, writeFileAtomic } from '../store/atomic.js';
import { type IndexState, indexedIdsBetween, readIndex } from '../store/dir-index.js';
import { readChannels } from '../channels/membership.js';
import { scopeDir, scopeDirName, stateDir } from '../store/layout.js';
import { idsFrom } from '../store/listing.js';
import { cachedListing } from '../store/listing-cache.js';
import { dropOwnerFile, withLock } from '../store/lock.js';
import { clearOwed, readOwed } from './owed.js';
import { COLD_RECENT_MS, type DirListing, type Ledger, type Pending, joinMark, newLedger, parseLedger, planPending, recordConsumed } from './plan.js';
import { receiveScopes } from './receive.js';
import { FILE_MODE, ensureDir } from '../store/root.js';
import { type Message, type Reporter, SIGNAL_EXT, readMessage, scopeDirProblem } from '../store/messages.js';
import { type Gate, createGate } from '../trust/gate.js';
import { idFloor } from '../../wire/ids.js';

export { COLD_ADDRESSED_MAX, COLD_RECENT_MS, LEDGER_GRACE_MS, type Invited, type Ledger, type Pending, noteShown } from './plan.js';

export function ledgerDir(root: string): string {
  return join(stateDir(root), 'ledger');
}

/**
 * Each session's ledger, its lock and its temporaries live in a directory of their own. In
 * one shared directory, a broadcast to 100 sessions meant 100 sensors each creating,
 * renaming and unlinking entries in that directory at the same moment, and a directory
 * takes such changes one at a time: the last sensor waited ~100 ms for the others
 * (issue #12 §3). Separate directories change in parallel.
 */
export function sessionLedgerDir(root: string, sid: string): string {
  return join(ledgerDir(root), encodeURIComponent(sid));
}

/**
 * The ledger is a log: each delivery cycle appends the whole ledger as one line, and the last
 * complete line is the ledger. An append makes no file and frees none; the rename of a
 * rewritten file did both, for every sensor on every message, and ext4 grows slower to make
 * a file the more files were freed in the last seconds (issue #12 §3: with 20 sessions a
 * fifth of the sensors' CPU went to making and freeing these files and the locks). Once the
 * log passes LOG_COMPACT_BYTES it is rewritten as its last line (one rename in many cycles).
 * Each line starts on a line of its own (a newline first), so an append a crash cut short
 * spoils no line after it; readers take the last line that ends in a newline.
 */
export function ledgerFile(root: string, sid: string): string {
  return join(sessionLedgerDir(root, sid), 'ledger.jsonl');
}

/** The lock of a session's ledger. */
function ledgerLock(root: string, sid: string): string {
  return join(sessionLedgerDir(root, sid), 'ledger.json.lock');
}

/** Where attend 0.4 to 0.6 kept the ledger (one JSON file, rewritten by rename): read when there is no log. */
function plainLedgerFile(root: string, sid: string): string {
  return join(sessionLedgerDir(root, sid), 'ledger.json');
}

/** Where an attend before 0.4 kept the ledger: read when the new place has none. */
function legacyLedgerFile(root: string, sid: string): string {
  return join(ledgerDir(root), `${encodeURIComponent(sid)}.json`);
}

export const LOG_COMPACT_BYTES = 256 * 1024;

export type LedgerRead = { state: 'missing' } | { state: 'ok'; ledger: Ledger; legacy?: string } | { state: 'corrupt'; file: string };

/**
 * The last complete line of the log open at `fd` (`size` bytes), or null when it has none.
 * Read from the end: a log holds many copies of the ledger, and only the last counts.
 */
function lastLine(fd: number, size: number): string | null {
  for (let chunk = 64 * 1024; ; chunk *= 4) {
    const n = Math.min(size, chunk);
    const buf = readAll(fd, n, size - n);
    // What follows the last newline is an append still going on, or one a crash cut short.
    const end = buf.lastIndexOf(10);
    if (end < 0) {
      // No newline at all: one ledger written whole by something other than the log's
      // writer (every append starts with a newline).
      if (n === size) return size > 0 ? buf.toString('utf8') : null;
      continue;
    }
    let stop = end;
    let start = buf.lastIndexOf(10, stop - 1) + 1;
    // Skip the empty line a cut-short append leaves between two newlines.
    while (start === stop && start > 0) {
      stop = start - 1;
      start = buf.lastIndexOf(10, stop - 1) + 1;
    }
    if (start === 0 && n < size) continue; // the line may begin before this chunk
    return start === stop ? null : buf.toString('utf8', start, stop);
  }
}

function readLog(file: string): string | null | undefined {
  let fd: number;
  try {
    fd = openSync(file, fsc.O_RDONLY);
  } catch {
    return undefined;
  }
  try {
    return lastLine(fd, fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}

export function readLedger(root: string, sid: string): LedgerRead {
  const log = readLog(ledgerFile(root, sid));
  if (log !== undefined) {
    const ledger = log === null ? null : parseLedger(log);
    return ledger ? { state: 'ok', ledger } : { state: 'corrupt', file: ledgerFile(root, sid) };
  }
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
 * Not synced (issue #12 §3: with 100 sessions every broadcast meant 100 journal commits).
 * A ledger a crash rolled back repeats the lines in flight (delivery comes before the
 * record anyway); a line a crash cut short is passed over for the one before it. Neither
 * loses a message. Returns the log's fileStamp after the write.
 */
function writeLedger(root: string, ledger: Ledger): string {
  const file = ledgerFile(root, ledger.sid);
  const line = JSON.stringify(ledger);
  let fd: number;
  try {
    fd = openSync(file, fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT, FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw writeError(file, err);
    ensureDir(sessionLedgerDir(root, ledger.sid));
    fd = openSync(file, fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT, FILE_MODE);
  }
  let st;
  try {
    writeAll(fd, Buffer.from(`\n${line}\n`, 'utf8'));
    st = fstatSync(fd);
  } catch (err) {
    throw writeError(file, err);
  } finally {
    closeSync(fd);
  }
  if (st.size <= LOG_COMPACT_BYTES) return statStamp(st);
  writeFileAtomic(file, `${line}\n`, { sync: false });
  return fileStamp(file);
}

/**
 * This process's ledger per log file as its last cycle left it, with the log's fileStamp
 * then (inode, size, mtime; read under the lock, so no other writer is between): a
 * long-running reader (the sensor) does not read back and parse what it wrote itself unless
 * another process wrote since. Handed to one cycle at a time, under the lock.
 */
const kept = new Map<string, { stamp: string; ledger: Ledger }>();

/**
 * Ids in a directory that sort at or above `mark`, ascending, and how many valid ids sort
 * below it. Names only: nothing is read. The directory is walked entry by entry (opendir),
 * never held as one array of every name: a sensor's first listing of a 100,000-message
 * history must not leave its memory at twice the size it needs at rest (issue #12 §1).
 */
function listIdsFrom(dir: string, mark: string | undefined, reporter: Reporter): { ids: string[]; below: number } {
  let d: Dir;
  try {
    d = opendirSync(dir, { bufferSize: 1024 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') reporter.unreadable?.(dir, code === 'EACCES' || code === 'EPERM' ? `permission denied (${code})` : `cannot list it (${code ?? 'error'})`);
    return { ids: [], below: 0 };
  }
  const out: string[] = [];
  let below = 0;
  const markName = mark === undefined ? '' : mark;
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      const name = e.name;
      if (!name.endsWith(SIGNAL_EXT) || name.charCodeAt(0) === 46 /* . */) continue;
      // A cheap, conservative first cut on the whole name, then the exact comparison.
      if (name < markName) {
        below++;
        continue;
      }
      const id = name.slice(0, -SIGNAL_EXT.length);
      if (id < markName) below++;
      else if (isMessageId(id)) out.push(id);
    }
  } catch (err) {
    reporter.unreadable?.(dir, `cannot list it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    d.closeSync();
  }
  return { ids: out.sort(), below };
}

export interface TakeOptions {
  now: number;
  reporter: Reporter;
  warn(line: string): void;
  /**
   * `presented`: the plan checks policy only, and the conduit verifies signatures of what it
   * presents with Pending.check before presenting it (the drain). Default `all`.
   */
  verify?: 'all' | 'presented';
}

/**
 * One delivery cycle under the ledger's lock: read what is needed, plan what is pending for
 * `who` (tools/bus/delivery/plan.ts), hand it to `deliver`, then record what `deliver` says it
 * consumed (plus everything that was never going to be shown). If `deliver` throws, nothing
 * is recorded and the error propagates.
 */
export function takePending<T>(root: string, who: Identity, opts: TakeOptions, deliver: (p: Pending) => { consume: string[]; result: T }): T {
  return withLock(ledgerLock(root, who.id), () => {
    const now = opts.now;
    const file = ledgerFile(root, who.id);
    const stamp = fileStamp(file);
    const mine = kept.get(file);
    // Taken out for this cycle: a cycle that fails part-way leaves nothing half-changed behind.
    kept.delete(file);
    const read: LedgerRead = mine !== undefined && stamp !== '-' && mine.stamp === stamp ? { state: 'ok', ledger: mine.ledger } : readLedger(root, who.id);
    let ledger: Ledger;
    let cold = false;
    if (read.state === 'ok') ledger = read.ledger;
    else {
      if (read.state === 'corrupt') {
        const aside = `${read.file}.corrupt-${now}`;
        try {
          renameSync(read.file, aside);
        } catch {
          // gone already; rebuilding is all that matters
        }
        opts.warn(`attend: the delivery ledger ${read.file} was not valid; moved it to ${aside} and rebuilt it (cold-start rule)`);
      }
      ledger = newLedger(who.id, now);
      cold = true;
    }
    // What the ledger said before, less the consumed ids (the costly part, checked by count).
    const keyOf = (l: Ledger) => JSON.stringify({ ...l, above: l.above.length, updated: 0 });
    const was = keyOf(ledger);
    const dirs = readDirs(root, who, ledger, cold, now, opts.reporter);
    const owed = readOwed(root, who.id);
    // The one check before anything reaches a conduit (issue 14, tools/bus/trust/gate.ts): a held
    // message (bad signature, refused by policy) reads as unreadable, so the plan records it
    // as consumed and never hands it over; `attend inbox --held` lists it for the owner.
    // Under a policy that did not parse nothing is delivered and nothing is recorded.
    const gate = createGate(root, who);
    const broken = gate.broken();
    if (broken !== null) {
      opts.warn(`attend: ${broken}`);
      return deliver({ fresh: [], cold, hidden: 0, invited: [], ledger }).result;
    }
    const deferred = opts.verify === 'presented';
    const plan = planPending(ledger, cold, dirs, owed, who, now, gatedReader(root, gate, opts.reporter, deferred));
    const unsettled = dirs.some((d) => d.unsettled === true);
    const { consume, result } = deliver({
      fresh: plan.fresh,
      cold,
      hidden: plan.hidden,
      invited: plan.invited,
      ledger,
      ...(unsettled ? { unsettled } : {}),
      ...(deferred ? { check: (m: Message) => gate.held(m) } : {}),
    });
    const consumed = [...plan.auto, ...consume];
    recordConsumed(ledger, dirs, consumed, now);
    // A cycle that changed nothing writes nothing (a wake on a line still on its way, a tick):
    // without new consumption `above` only shrinks as the marks move, which the key shows.
    const legacy = read.state === 'ok' ? read.legacy : undefined;
    if (read.state !== 'ok' || legacy !== undefined || consumed.length > 0 || keyOf(ledger) !== was) kept.set(file, { stamp: writeLedger(root, ledger), ledger });
    else if (stamp !== '-') kept.set(file, { stamp, ledger });
    if (legacy !== undefined) {
      try {
        unlinkSync(legacy);
      } catch {
        // gone already
      }
    }
    for (const o of owed) clearOwed(root, who.id, o.channel);
    return result;
  });
}

/**
 * What the next delivery cycle would surface, without taking the lock or writing anything
 * (`attend status`: its unread count is what the next wake delivers, issue #10 §5).
 */
export function peekPending(root: string, who: Identity, opts: Pick<TakeOptions, 'now' | 'reporter'>): Pending {
  const now = opts.now;
  const read = readLedger(root, who.id);
  const cold = read.state !== 'ok';
  const ledger = read.state === 'ok' ? read.ledger : newLedger(who.id, now);
  const dirs = readDirs(root, who, ledger, cold, now, opts.reporter, false);
  const gate = createGate(root, who);
  if (gate.broken() !== null) return { fresh: [], cold, hidden: 0, invited: [], ledger };
  const plan = planPending(ledger, cold, dirs, readOwed(root, who.id), who, now, gatedReader(root, gate, opts.reporter));
  return { fresh: plan.fresh, cold, hidden: plan.hidden, invited: plan.invited, ledger };
}

/** readMessage through the gate: what it holds reads as null (consumed, never surfaced). */
function gatedReader(root: string, gate: Gate, reporter: Reporter, policyOnly = false): (scope: Scope, id: string) => Message | null {
  return (scope, id) => {
    const m = readMessage(root, scope, id, reporter);
    return m !== null && (policyOnly ? gate.heldByPolicy(m) : gate.held(m)) === null ? m : null;
  };
}

/**
 * Each receive directory's new ids. A channel joined since the ledger began starts at the
 * join (what came before is owed only through an invite), so its watermark is set first.
 */
function readDirs(root: string, who: Identity, ledger: Ledger, cold: boolean, now: number, reporter: Reporter, reconcile = true): DirListing[] {
  let joinedAt: Record<string, number> | undefined;
  const joined = (channel: string): number => {
    joinedAt ??= Object.fromEntries(Object.entries(readChannels(root).channels).map(([name, c]) => [name, c.members[who.id]?.joined ?? now]));
    return joinedAt[channel] ?? now;
  };
  return receiveScopes(root, who).map((scope) => {
    const dirName = scopeDirName(scope);
    if (ledger.marks[dirName] === undefined && !cold && scope.kind === 'channel') ledger.marks[dirName] = joinMark(joined(scope.name), now);
    const mark = ledger.marks[dirName];
    if (mark === undefined && scope.kind !== 'tray') {
      const fromCache = coldFromListing(root, scope, dirName, now, reporter);
      if (fromCache) return fromCache;
    }
    return listDir(scopeDir(root, scope), scope, dirName, {
      mark,
      prev: ledger.index[dirName],
      now,
      reporter,
      reconcile,
      // A directory with no watermark yet starts by the cold-start rule: #open and channels
      // show only what is recent, so only recent names are kept (the rest is counted).
      ...(mark === undefined && scope.kind !== 'tray' ? { coldFloor: idFloor(now - COLD_RECENT_MS) } : {}),
      // Lines for ids below the watermark are late arrivals (another machine's messages
      // imported after an outage) and are delivered, unless made before this reader could
      // have received them: before its ledger began, or before it joined the channel.
      since: idFloor(scope.kind === 'channel' ? Math.max(ledger.created, joined(scope.name)) : ledger.created),
    });
  });
}

/**
 * A cold start of #open or a channel from the scope's listing cache, when there is one that
 * the directory's index brings up to date (tools/bus/store/listing-cache.ts cachedListing): its newest
 * entries give the ids of the cold-start window and the count of the rest, where a full
 * listing walks every name (issue #12 §1, §2: ~50 ms at 100,000). The cache is as exact as
 * a full listing now (the same index rules keep it), so the index state it is at stands for
 * one, the "missed file" marks included. Without such a cache: null, and the directory is
 * listed.
 */
function coldFromListing(root: string, scope: Scope, dirName: string, now: number, reporter: Reporter): DirListing | null {
  return cachedListing(root, scope, { now, reporter }, (l): DirListing | null => {
    if (l.mark === undefined) return null;
    const { ids, older } = idsFrom(l, now - COLD_RECENT_MS);
    const index: IndexState = { ...l.mark, known: [], lmark: idFloor(now), loff: l.mark.off, lseen: idsFrom(l, now).ids };
    return { scope, dirName, ids, index, older };
  });
}

interface ListOptions {
  /** The directory's watermark; none on a cold start. */
  mark: string | undefined;
  /** Where the ledger is in the directory's index. */
  prev: IndexState | undefined;
  now: number;
  reporter: Reporter;
  /** Take the 10-minute reconciling listing when it is due (a peek leaves it). */
  reconcile: boolean;
  /** Cold start of #open or a channel: list only ids at or above this. */
  coldFloor?: string;
  /** Late arrivals made before this id are not this reader's. */
  since: string;
}

/**
 * The ids at or above `mark` in one directory: from its index hint when that explains every
 * change since the last cycle, else from a full listing — which also hands back the files
 * below the watermark that the index never had a line for (IndexState.lmark).
 */
function listDir(dir: string, scope: Scope, dirName: string, o: ListOptions): DirListing {
  const { mark, prev, now, reporter, coldFloor } = o;
  // A symlinked scope directory is refused (issue #10 item 4): nothing in it is delivered.
  const problem = scopeDirProblem(dir);
  if (problem !== null) {
    reporter.unreadable?.(dir, problem);
    return { scope, dirName, ids: [], index: undefined };
  }
  const r = readIndex(dir, prev, now, { reconcile: o.reconcile });
  // A receive directory nobody has written to yet (a session's own tray, mostly): no listing.
  if (!r.ok && r.why === 'no directory') return { scope, dirName, ids: [], index: undefined };
  if (!r.ok) {
    // Files the index missed since the last full listing: made after it, below the watermark
    // now, never seen by it and without a line since (IndexState.lmark).
    const last = prev?.lmark !== undefined && mark !== undefined && prev.lmark < mark && r.state && prev.file === r.state.file ? prev : undefined;
    const indexed = last ? indexedIdsBetween(dir, last.loff!, r.state!.off) : null;
    const floor = last && indexed ? last.lmark! : (mark ?? coldFloor);
    const { ids: all, below } = listIdsFrom(dir, floor, reporter);
    const ids: string[] = [];
    const missed: string[] = [];
    const seen = new Set(last?.lseen);
    for (const id of all) {
      if (mark === undefined || id >= mark) ids.push(id);
      else if (indexed && !indexed.has(id) && !seen.has(id)) missed.push(id);
    }
    if (r.state) {
      const lmark = idFloor(now);
      Object.assign(r.state, { lmark, loff: r.state.off, lseen: all.filter((id) => id >= lmark) });
    }
    return { scope, dirName, ids, index: r.state, ...(missed.length > 0 ? { missed } : {}), ...(mark === undefined && coldFloor !== undefined ? { older: below } : {}) };
  }
  const set = new Set<string>();
  const late = new Set<string>();
  for (const id of [...r.state.known, ...r.ids]) {
    if (!isMessageId(id)) continue;
    if (mark === undefined || id >= mark) set.add(id);
    else if (id >= o.since) late.add(id);
  }
  return { scope, dirName, ids: [...set].sort(), index: r.state, ...(late.size > 0 ? { late: [...late].sort() } : {}), ...(r.settled ? {} : { unsettled: true }) };
}

/** Has `sid`'s ledger consumed message `id` of directory `dirName`? No ledger: no. */
export function isConsumedBy(root: string, sid: string, dirName: string, id: string): boolean {
  const r = readLedger(root, sid);
  if (r.state !== 'ok') return false;
  const mark = r.ledger.marks[dirName];
  return (mark !== undefined && id < mark) || r.ledger.above.includes(id);
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
      ids.add(decodeURIComponent(n.endsWith('.json') ? n.slice(0, -'.json'.length) : n));
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
    kept.delete(ledgerFile(root, fromSid));
    unlinkLedger(root, fromSid);
    return true;
  });
  // The lock is released by now: the old session's directory can go.
  if (moved) removeLedgerDir(root, fromSid);
  return moved;
}
