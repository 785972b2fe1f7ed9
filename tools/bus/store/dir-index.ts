// The per-directory index hint (issue #4, "drain cost grows with history").
//
// Listing a receive directory costs O(history): `readdirSync` of 100,000 names is ~80 ms, and
// Linux has no "entries since" call. So every attend writer, after renaming a message into
// place, appends one line to `signals/<scope>/.index` (a dot-file, not `*.signal`, so the
// layout and every reader that only reads `*.signal` are untouched):
//
//     <id> <dir mtime before the write, ns, or -> <dir mtime after the rename, ns>\n
//
// with O_APPEND in one write(2) (atomic for a line this short). A reader that remembers a
// byte offset reads only what was appended since, instead of listing the directory.
//
// The index is a hint and never the truth. A file can be in the directory without its line:
// a writer that crashed between rename and append, an older attend, another tool writing the
// layout by hand; and cleanup/purge/dissolve delete files without a line. Each of those
// changes the directory's mtime without explaining it, and that is what the reader checks:
// the lines' before/after stamps must chain from the directory mtime the reader saw at its
// last sync to the directory's mtime now (`explains` below). A write nobody indexed breaks
// the chain, whatever came after it, so the reader falls back to a full listing. What the
// chain cannot see is a foreign write inside an indexed writer's own stat-to-stat window or
// within one timestamp tick of another change; the ledger covers that by listing in full at
// least every RECONCILE_MS and by never moving a watermark past what a full listing saw
// (tools/bus/delivery/ledger.ts), so such a message is late, never lost.

import { closeSync, fstatSync, openSync, statSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { writeAll, readAll } from './atomic.js';
import { FILE_MODE } from './root.js';

export const INDEX_NAME = '.index';
/** A full listing at least this often per directory, whatever the index says. */
export const RECONCILE_MS = 10 * 60_000;

/** The directory's mtime in ns as a decimal string, or '-' when it cannot be read. */
export function dirStamp(dir: string): string {
  try {
    return statSync(dir, { bigint: true, throwIfNoEntry: false })?.mtimeNs.toString() ?? '-';
  } catch {
    return '-';
  }
}

/**
 * Writer side: record that `id` was renamed into `dir`. `before` is dirStamp(dir) taken
 * before the write began. Never throws: a missing line only costs the reader a full listing.
 */
export function appendIndex(dir: string, id: string, before: string): void {
  appendLines(dir, [id], before, false);
}

/** An index file as its writer left it: its inode and its size just after the writer's lines. */
export interface IndexEnd {
  ino: number;
  size: number;
}

/**
 * Writer side for a batch renamed into `dir` at once (the relay's imports): one line per id,
 * each with the stamp taken before the batch's first write and the one after its last
 * rename, in one write(2), so the chain still explains every change in between. Returns the
 * index and its size just after those lines when nobody else appended meanwhile (the relay tells
 * its own lines' event from another writer's by it), else null.
 */
export function appendIndexMany(dir: string, ids: string[], before: string): IndexEnd | null {
  return appendLines(dir, ids, before, true);
}

function appendLines(dir: string, ids: string[], before: string, measure: boolean): IndexEnd | null {
  if (ids.length === 0) return null;
  try {
    const after = dirStamp(dir);
    const fd = openSync(join(dir, INDEX_NAME), fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT, FILE_MODE);
    try {
      const lines = Buffer.from(ids.map((id) => `${id} ${before} ${after}\n`).join(''));
      const start = measure ? fstatSync(fd).size : 0;
      // Every byte or a failure, never a silent short line (issue #10 item 1). A line cut by a
      // full disk cannot be taken back under O_APPEND (another writer may follow it); it
      // reads as a garbage line, which sends readers to a full listing: late, never lost.
      writeAll(fd, lines);
      if (!measure) return null;
      const end = fstatSync(fd);
      return end.size - start === lines.length ? { ino: end.ino, size: end.size } : null;
    } finally {
      closeSync(fd);
    }
  } catch {
    // the directory went away, or the disk is full: the reader lists in full
    return null;
  }
}

/** Where a tail reader of one index stopped: the index file's identity and a byte offset. */
export interface IndexTail {
  file: string;
  off: number;
}

/**
 * The ids appended to `dir`'s index since `prev` (whole lines only), whether or not the
 * chain explains the directory: for a reader that lists in full on its own schedule (the
 * relay's outbound side, which must not list a busy directory on every write). `reset` when
 * the index is new, replaced or truncated (the ids since `prev` are unknown). Null when the
 * index cannot be read.
 */
export function readIndexTail(dir: string, prev: IndexTail | undefined): { ids: string[]; tail: IndexTail; reset: boolean } | null {
  const fd = openIndex(dir);
  if (fd === null) return null;
  try {
    const f = indexFile(fd);
    if (f === null) return null;
    const { file, size } = f;
    if (!prev || prev.file !== file || size < prev.off) return { ids: [], tail: { file, off: size }, reset: true };
    const buf = readAll(fd, size - prev.off, prev.off);
    const end = buf.lastIndexOf(10) + 1;
    return { ids: lineIds(buf.toString('utf8', 0, end)), tail: { file, off: prev.off + end }, reset: false };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** What a reader remembers per directory (kept in the session's ledger). */
export interface IndexState {
  /** The index file's identity (inode and birth time): a recreated index starts over. */
  file: string;
  /** Bytes of the index already read. */
  off: number;
  /** Directory mtime (ns) up to which everything in the directory is known. */
  mtime: string;
  /** When the directory was last listed in full (ms). */
  listed: number;
  /** Ids at or above the watermark seen since and not consumed yet. */
  known: string[];
  /**
   * At the last full listing: the smallest id made at its time, the index's size then, and
   * the ids at or above lmark it saw (ids from the future: another machine's clock). Between
   * two full listings the watermark follows the index; the next full listing delivers any
   * file in [lmark, watermark) that it did not see and that has no line in the index from
   * loff on: a file the index missed (issue #12 §5: the consumed set stays as small as the
   * grace window instead of waiting minutes for a full listing).
   */
  lmark?: string;
  loff?: number;
  lseen?: string[];
  /**
   * Also at the last full listing, for what arrives below lmark (issue 21 §4/3: a late
   * message is noticed by its arrival, not by its id): the count and hash sum of the names
   * below lmark (tools/bus/store/follower.ts NameSum) and the directory stamp taken before it
   * (ns). When the next listing's sum differs, the files below lmark changed since `at` are
   * arrivals; `lraced` are those it delivered that changed after its own stamp (they landed
   * while it listed), so the next one does not offer them again.
   */
  lsum?: { n: number; h: number; at: string };
  lraced?: string[];
}

/**
 * How long a change the index does not explain yet may wait for its line. An indexed writer
 * appends right after its rename, but a reader woken by the rename itself (the sensor) gets
 * there first, and with several writers racing one's line can trail another's (issue #12
 * §6: 44 % of reader cycles listed in full with 4 writers). Within this window the reader
 * takes the ids explained so far and looks again; past it, the change is somebody else's
 * (a write without a line, a delete) and the directory is listed in full.
 */
export const SETTLE_MS = 100;

type IndexRead =
  /** `settled` false: a recent change is not explained yet; read again after SETTLE_MS. */
  | { ok: true; ids: string[]; state: IndexState; settled: boolean }
  /** List in full; `state` is what to remember after that listing (none without an index). */
  | { ok: false; why: string; state: IndexState | undefined };

const LINE = /^([A-Za-z0-9_-]{1,128}) (-|\d{1,30}) (\d{1,30})$/;

/** The ids of the well-formed lines in `text`, in order; anything else names none. */
function lineIds(text: string): string[] {
  const ids: string[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m) ids.push(m[1]!);
  }
  return ids;
}

/**
 * The open index's identity (inode and birth time: a recreated index is another file) and
 * size; null when it is not a plain file.
 */
function indexFile(fd: number): { file: string; size: number } | null {
  const st = fstatSync(fd, { bigint: true });
  return st.isFile() ? { file: `${st.ino}:${st.birthtimeNs}`, size: Number(st.size) } : null;
}

/** `dir`'s index opened for reading (never through a symbolic link), or null. */
function openIndex(dir: string): number | null {
  try {
    return openSync(join(dir, INDEX_NAME), fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch {
    return null;
  }
}

/** IndexState.file of a directory that had no index when it was listed. */
export const NO_INDEX = 'none';

/**
 * The periodic full listing is due. A reader that records nothing (a status peek) leaves it
 * to the next delivery cycle, which records it; otherwise every peek would list in full.
 */
function reconcileDue(prev: IndexState, now: number, opts: { reconcile?: boolean }): boolean {
  return opts.reconcile !== false && (now - prev.listed >= RECONCILE_MS || now < prev.listed);
}

/**
 * Reader side: the ids appended to `dir`'s index since `prev`, if the index explains every
 * change to the directory since then; otherwise why not. Call before listing: the stamps are
 * taken first, so a full listing that follows sees everything they cover.
 *
 * "Explains": each line is a writer's interval [mtime before its write, mtime after its
 * rename]. Starting from the mtime the reader last knew, the intervals must chain without a
 * gap up to the directory's mtime now; writers that overlap (racing each other) chain too.
 * A gap is a change nobody indexed. A gap younger than SETTLE_MS may be a line not written
 * yet: the ids so far are returned unsettled, and the same lines are read again next time.
 */
export function readIndex(dir: string, prev: IndexState | undefined, now: number, opts: { reconcile?: boolean } = {}): IndexRead {
  const current = dirStamp(dir);
  // Checked before the index is opened, so a reader can tell "nothing there yet" from "list it".
  if (current === '-') return { ok: false, why: 'no directory', state: undefined };
  const fd = openIndex(dir);
  if (fd === null) {
    // A directory without an index (nobody has written to it through attend yet, like a
    // session's own tray, or only by hand): its mtime alone says whether anything changed
    // since it was listed, within the reconcile period. Only an mtime older than that listing
    // by SETTLE_MS counts: a change in the same clock tick as the listing would not move it.
    if (prev?.file === NO_INDEX && prev.mtime === current && !reconcileDue(prev, now, opts) && Number(BigInt(current) / 1_000_000n) + SETTLE_MS <= prev.listed) {
      return { ok: true, ids: [], settled: true, state: prev };
    }
    return { ok: false, why: 'no index', state: { file: NO_INDEX, off: 0, mtime: current, listed: now, known: [] } };
  }
  try {
    const f = indexFile(fd);
    if (f === null) return { ok: false, why: 'not a file', state: undefined };
    const { file, size } = f;
    const fresh: IndexState = { file, off: size, mtime: current, listed: now, known: [] };
    if (!prev) return { ok: false, why: 'first sight', state: fresh };
    if (prev.file !== file) return { ok: false, why: 'index replaced', state: fresh };
    if (size < prev.off) return { ok: false, why: 'index truncated', state: fresh };
    if (reconcileDue(prev, now, opts)) return { ok: false, why: 'reconcile', state: fresh };
    const buf = readAll(fd, size - prev.off, prev.off);
    // A line is complete only with its newline; a partial tail is read next time.
    const end = buf.lastIndexOf(10) + 1;
    const ids: string[] = [];
    const spans: [bigint, bigint][] = [];
    for (const line of buf.toString('utf8', 0, end).split('\n')) {
      if (line === '') continue;
      const m = LINE.exec(line);
      if (!m) return { ok: false, why: 'garbage line', state: fresh };
      ids.push(m[1]!);
      if (m[2] === '-') return { ok: false, why: 'directory created by the writer', state: fresh };
      spans.push([BigInt(m[2]!), BigInt(m[3]!)]);
    }
    const cur = BigInt(current);
    // How far the intervals reach, chained from what the reader knew.
    spans.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    let reach = BigInt(prev.mtime);
    let gap: bigint | null = null;
    for (const [b, a] of spans) {
      if (b > reach) {
        gap = b;
        break;
      }
      if (a > reach) reach = a;
    }
    if (gap === null && cur <= reach) {
      return { ok: true, ids, settled: true, state: { ...prev, off: prev.off + end, mtime: reach.toString() } };
    }
    const unexplained = gap ?? cur;
    const age = now - Number(unexplained / 1_000_000n);
    // A clock set back makes the age negative: not "recent", so it is listed.
    if (age >= 0 && age < SETTLE_MS) return { ok: true, ids, settled: false, state: prev };
    return { ok: false, why: 'unexplained change', state: fresh };
  } catch {
    return { ok: false, why: 'unreadable', state: undefined };
  } finally {
    closeSync(fd);
  }
}

/**
 * The ids with a line in `dir`'s index between byte offsets `from` and `to` (a garbage line
 * names none), or null when the index cannot be read there (the caller then cannot tell a
 * miss from a delivery, and treats the range as it did before: consumed).
 */
export function indexedIdsBetween(dir: string, from: number, to: number): Set<string> | null {
  if (to < from) return null;
  const fd = openIndex(dir);
  if (fd === null) return null;
  try {
    return new Set(lineIds(readAll(fd, to - from, from).toString('utf8')));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
