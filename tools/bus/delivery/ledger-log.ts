// The consumption ledger's log (docs/architecture.md, "Delivery"): where a session's ledger
// lives, how a cycle appends it and how the last complete line is read back, its compaction,
// and the copy a long-running conduit keeps of what it wrote itself. What the ledger holds
// and how a cycle plans from it: tools/bus/delivery/plan.ts; its older forms:
// ledger-legacy.ts.

import { closeSync, fstatSync, openSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { fileStamp, readAll, statStamp, writeAll, writeError, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { FILE_MODE, ensureDir } from '../store/root.js';
import type { Ledger } from './plan.js';

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
 * Not synced (issue #12 §3: with 100 sessions every broadcast meant 100 journal commits).
 * A ledger a power loss rolled back repeats the lines shown since; a line a crash cut short is passed over for the one before it. Neither
 * loses a message. Returns the log's fileStamp after the write.
 */
export function writeLedger(root: string, ledger: Ledger): string {
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
