// The consumption ledger's log (docs/architecture.md, "Delivery"): where a session's ledger
// lives, how a cycle appends it and how the last complete line is read back, its compaction,
// and the copy a long-running conduit keeps of what it wrote itself. What the ledger holds
// and how a cycle plans from it: tools/bus/delivery/plan.ts; its older forms:
// ledger-legacy.ts.

import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, statSync, unlinkSync, writeSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { madeDirs, readAll, statStamp, syncDirs, writeAll, writeError, writeFileAtomic } from '../store/atomic.js';
import { isMessageId } from '../../wire/ids.js';
import { stateDir } from '../store/layout.js';
import { selfStart } from '../store/lock.js';
import { FILE_MODE, ensureDir } from '../store/root.js';
import { type Ledger, isConduit } from './plan.js';

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
export function ledgerLock(root: string, sid: string): string {
  return join(sessionLedgerDir(root, sid), 'ledger.json.lock');
}

export const LOG_COMPACT_BYTES = 256 * 1024;

/**
 * A session's ledger as read. `flight`: a wake still in flight (InFlight `f`): its ids are not
 * in the ledger, and whether they count as shown depends on whether its owner lives
 * (tools/bus/delivery/ledger.ts settleRead). A settled one is applied already.
 */
export type LedgerRead = { state: 'missing' } | { state: 'ok'; ledger: Ledger; legacy?: string; flight?: InFlight } | { state: 'corrupt'; file: string };

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

/** The last complete line of the log `file`: null when it has none, undefined when there is no log. */
export function readLog(file: string): string | null | undefined {
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

/**
 * A conduit's wake in flight (issue 21 §6), the last field of the line a cycle appends before
 * it shows anything: the ids it is about to show and its owner (pid and process start time,
 * as processAlive judges them). `st` is one byte, settled in place once the wake is out:
 * `c` shown (the ids count as consumed), `x` withdrawn (not shown: pending again). While it
 * reads `f` the ids count as shown as long as the owner lives (its confirm is on its way, or
 * did not land and is retried at its next cycle); once the owner is gone they are offered
 * again, marked as possible repeats, since nobody can say whether it printed them.
 */
export interface InFlight {
  ids: string[];
  pid: number;
  start: string;
  /**
   * The conduit showing them (issue 24: "who has been shown it by which conduit"), written
   * with the record, before anything is shown; absent in records written before it was kept.
   */
  by?: string;
  st: 'f' | 'c' | 'x';
}

const FLIGHT_KEY = ',"inflight":';

/** The in-flight entry of a log line, if it has one (always the line's last field). */
export function flightOf(line: string): InFlight | undefined {
  const at = line.lastIndexOf(FLIGHT_KEY);
  if (at < 0 || !line.endsWith('}}')) return undefined;
  try {
    const o = JSON.parse(line.slice(at + FLIGHT_KEY.length, -1)) as Partial<InFlight>;
    if (!Array.isArray(o.ids) || !o.ids.every((id) => typeof id === 'string' && isMessageId(id)) || !Number.isSafeInteger(o.pid) || typeof o.start !== 'string') return undefined;
    if (o.st !== 'f' && o.st !== 'c' && o.st !== 'x') return undefined;
    return { ids: o.ids, pid: o.pid!, start: o.start, ...(isConduit(o.by) ? { by: o.by } : {}), st: o.st };
  } catch {
    return undefined;
  }
}

/** Where an appended in-flight entry's state byte is, to settle it (settleFlight). */
export interface Flight {
  file: string;
  ino: number;
  offset: number;
  /** Directories the append made (the log's among them), synced after the log is (settleFlight). */
  dirs?: string[];
}

/**
 * Synced (issue 21, spec §5: a crash may repeat only the messages in flight): the append is
 * fdatasync'ed before the cycle ends, so a power cut cannot roll the ledger back over seconds
 * of messages already shown, which would show them again. An append to the log changes no
 * directory, so the directory is synced only when this write made the log (or its
 * directory); the compaction's rename is synced like a message's. This takes back part of
 * issue #12 §3's saving (it left the log unsynced: one journal commit per session per
 * broadcast); docs/benchmarks.md, "The ledger's fdatasync", measures what it costs a fan-out.
 * An append that fails (a full disk) is cut back off the log, so nothing of it stays, and
 * the error propagates; a line a crash cut short is passed over for the one before it.
 * Returns the log's fileStamp after the write.
 */
export function writeLedger(root: string, ledger: Ledger): string {
  return appendLedger(root, ledger).stamp;
}

/**
 * writeLedger, or, given `ids`, the line of a wake in flight (owned by this process, shown by
 * the conduit `by`) with where its state byte is. That append is not synced: the wake is shown right after it, and
 * its settling (settleFlight) syncs the log once it is out, so the sync stays off the path
 * from a message to the model, where it was before. What the record in flight must do first
 * is take its space, which a write does (a full disk refuses it here, before anything is
 * shown); a power cut before the settling's sync leaves the wake pending, which repeats only
 * the messages in flight.
 */
export function appendLedger(root: string, ledger: Ledger, ids?: string[], by?: string): { stamp: string; flight?: Flight } {
  const file = ledgerFile(root, ledger.sid);
  // `st` stays the record's last field: its byte is found from the line's end.
  const line = ids === undefined ? JSON.stringify(ledger) : JSON.stringify({ ...ledger, inflight: { ids, pid: process.pid, start: selfStart(), ...(isConduit(by) ? { by } : {}), st: 'f' } });
  // The state byte's place from the line's end: what follows it (`"}}`) is ASCII.
  const fromEnd = ids === undefined ? 0 : line.length - line.lastIndexOf('"st":"f"') - '"st":"'.length;
  const bytes = Buffer.byteLength(line);
  let fd: number;
  let made: string[] | undefined;
  let created = false;
  try {
    fd = openSync(file, fsc.O_WRONLY | fsc.O_APPEND);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw writeError(file, err);
    const dir = sessionLedgerDir(root, ledger.sid);
    made = madeDirs(dir, ensureDir(dir));
    try {
      fd = openSync(file, fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT, FILE_MODE);
      created = true;
    } catch (err2) {
      throw writeError(file, err2);
    }
  }
  let st;
  let at = 0;
  try {
    at = fstatSync(fd).size;
    writeAll(fd, Buffer.from(`\n${line}\n`, 'utf8'));
    if (ids === undefined) syncLog(fd);
    st = fstatSync(fd);
  } catch (err) {
    // Take the append back: cutting a file shorter frees space, it never needs it, so the
    // log is left as it was even on a full disk, and no wake counts as in flight.
    try {
      if (created && at === 0) unlinkSync(file);
      else ftruncateSync(fd, at);
    } catch {
      // a line cut short, which readers pass over
    }
    throw writeError(file, err);
  } finally {
    closeSync(fd);
  }
  // A log this write made is named durably only after its content is: here, after the synced
  // append; for a wake in flight, after its settling's sync.
  if (made !== undefined && ids === undefined) syncDirs(made);
  // Where the state byte is: in the line just appended (after its leading newline).
  // A wake in flight is shown right after this: its log is compacted once it is settled
  // (settleFlight), so the compaction's syncs stay off the path from a message to the model.
  if (ids !== undefined) return { stamp: statStamp(st), flight: { file, ino: st.ino, offset: at + 1 + bytes - fromEnd, ...(made !== undefined ? { dirs: made } : {}) } };
  if (st.size <= LOG_COMPACT_BYTES) return { stamp: statStamp(st) };
  return { stamp: compact(file, line) ?? statStamp(st) };
}

/**
 * The log rewritten as its last line `line`, once it passed LOG_COMPACT_BYTES; its new
 * fileStamp. Compaction is a saving, never a condition of the append, which has landed: on
 * a full disk the log stays long (undefined) and the next append tries again.
 */
function compact(file: string, line: string): string | undefined {
  try {
    writeFileAtomic(file, `${line}\n`, { syncDir: true });
    return statStamp(statSync(file));
  } catch {
    return undefined;
  }
}

/** The log's one fdatasync (scripts/bench/ledger-sync.mjs measures a build without it). */
function syncLog(fd: number): void {
  fdatasyncSync(fd);
}

/**
 * Settle the wake in flight where appendLedger put it: `c` shown, `x` withdrawn. One byte
 * overwritten in place, in a page the append already took, so a full disk cannot refuse it
 * (on a filesystem that overwrites in place: ext4, xfs, tmpfs; a copy-on-write one may need
 * a block), then the log is fdatasync'ed (the cycle's one sync, as writeLedger's). A sync
 * that fails leaves the settled byte in the page cache, which every reader sees; the next
 * cycle's synced append carries it to the disk. Returns the log's fileStamp after the write.
 */
export function settleFlight(f: Flight, st: 'c' | 'x'): string {
  let fd: number;
  try {
    fd = openSync(f.file, fsc.O_RDWR);
  } catch (err) {
    throw writeError(f.file, err);
  }
  try {
    if (fstatSync(fd).ino !== f.ino) throw new Error('the log was replaced');
    const was = readAll(fd, 1, f.offset);
    if (was[0] !== 0x66 /* f */) throw new Error('the wake in flight is not where it was written');
    if (writeSync(fd, st, f.offset) !== 1) throw new Error('short write');
    const now = fstatSync(fd);
    try {
      syncLog(fd);
      if (f.dirs !== undefined) syncDirs(f.dirs);
    } catch {
      // settled for every reader; durable with the next cycle's append
      return statStamp(now);
    }
    // The compaction appendLedger left for the settling: the settled line is the ledger.
    const last = now.size > LOG_COMPACT_BYTES ? lastLine(fd, now.size) : null;
    return (last !== null ? compact(f.file, last) : undefined) ?? statStamp(now);
  } catch (err) {
    throw writeError(f.file, err);
  } finally {
    closeSync(fd);
  }
}

/**
 * This process's ledger per log file as its last cycle left it, with the log's fileStamp
 * then (inode, size, mtime; read under the lock, so no other writer is between): a
 * long-running reader (the sensor) does not read back and parse what it wrote itself unless
 * another process wrote since. Handed to one cycle at a time, under the lock.
 */
const kept = new Map<string, { stamp: string; ledger: Ledger }>();

/** The ledger this process's last cycle left for `file`, taken out for this cycle (a cycle that fails part-way leaves nothing half-changed behind). */
export function takeKept(file: string): { stamp: string; ledger: Ledger } | undefined {
  const mine = kept.get(file);
  kept.delete(file);
  return mine;
}

/** Keep what this cycle left: the ledger, and the log's fileStamp after it. */
export function keep(file: string, stamp: string, ledger: Ledger): void {
  kept.set(file, { stamp, ledger });
}

/** Forget the copy of a ledger that moved away. */
export function forgetKept(file: string): void {
  kept.delete(file);
}
