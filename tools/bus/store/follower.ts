// The one follower (issue 19, "each rule once"): what is new in a scope directory since a
// reader last looked. The rule: follow the directory's `.index` from where the reader stopped
// while its stamps explain every change to the directory (tools/bus/store/dir-index.ts
// readIndex: the chain, SETTLE_MS, a full listing at least every RECONCILE_MS, a directory
// without an index left alone while its mtime has not moved), else list the directory in full.
// The stamps are always taken before the listing, so a listing covers everything they do.
//
// Every reader that asks "what is new" goes through here, and each brings its own window: what
// a full listing must hand back, the rest of the directory being what it already has.
//
//   the ledger (tools/bus/delivery/walk.ts)   ids at or above its watermark (down to the last
//                                             full listing's mark when it looks for files the
//                                             index missed), or its cold-start floor
//   the listing cache (listing-cache.ts)      every id: it rebuilds from the listing; without
//                                             `list` it only asks whether the index still
//                                             explains the directory (a cold start that can
//                                             use the cache instead of listing)
//   the chat (tools/chat/source/arrivals.ts)  every id, less its first load's history
//   the relay (tools/relay/outbound.ts)       every id, less what it handled; it follows the
//                                             tail loosely (followTail below)
//
// A window is a floor on ids: a full listing keeps only the names that sort at or above it
// and counts the rest, walking the directory entry by entry so that the names below never
// sit in memory at once (a sensor's first listing of a 100,000-message history must not leave
// its memory at twice the size it needs at rest, issue #12 §1). Without a floor every id is
// the answer anyway, and one readdir is faster (about 90 ms against 140 ms at 100,000).

import { type Dir, opendirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isMessageId } from '../../wire/ids.js';
import { type IndexState, type IndexTail, readIndex, readIndexTail } from './dir-index.js';
import { type Reporter, SIGNAL_EXT, errnoText, listIds, scopeDirProblem } from './messages.js';

interface FollowOptions {
  now: number;
  /** Told about a directory that is refused (a symbolic link) or cannot be listed. */
  reporter?: Reporter;
  /**
   * False: leave the periodic reconciling listing to a reader that records where it is (a
   * status peek); otherwise every peek would list in full. Default true.
   */
  reconcile?: boolean;
  /** The window: a full listing hands back the ids at or above this only, and counts the rest. */
  floor?: string;
  /**
   * False: when the index does not explain the directory, say so (`due`) and list nothing,
   * for a caller that has another way to the answer. Default true.
   */
  list?: boolean;
}

export type Followed =
  /**
   * No directory (`absent`: nothing there yet), or one refused (told to the reporter):
   * nothing to read.
   */
  | { via: 'none'; ids: string[]; state: undefined; absent: boolean }
  /**
   * The ids of the index lines since `prev`, in the order they were appended. `settled`
   * false: a recent change is not explained yet (a line on its way), `state` stayed where it
   * was, and the same lines are read again next time; look again after SETTLE_MS.
   */
  | { via: 'index'; ids: string[]; state: IndexState; settled: boolean }
  /**
   * A full listing: the window's ids, ascending, and how many names sort below the floor
   * (`sum`: their count and NameSum, with a floor).
   * `state` is what to remember (none when the index is not a plain file or cannot be read).
   * `failed`: the directory could not be listed (told to the reporter); what came before the
   * failure is in `ids`.
   */
  | { via: 'listing'; why: string; ids: string[]; below: number; sum?: NameSum; failed: boolean; state: IndexState | undefined }
  /** `list: false` and a full listing is due: why, and what to remember after one. */
  | { via: 'due'; why: string; state: IndexState | undefined };

/** What `follow` gives a caller that lets it list: never `due`. */
type Listed = Exclude<Followed, { via: 'due' }>;

/** What is new in `dir` since `prev` (what the last look returned as `state`; none at first). */
export function follow(dir: string, prev: IndexState | undefined, opts: FollowOptions & { list?: true }): Listed;
export function follow(dir: string, prev: IndexState | undefined, opts: FollowOptions): Followed;
export function follow(dir: string, prev: IndexState | undefined, opts: FollowOptions): Followed {
  // A symlinked scope directory is refused (issue #10 item 4): nothing is read through it.
  const problem = scopeDirProblem(dir);
  if (problem !== null) {
    opts.reporter?.unreadable?.(dir, problem);
    return { via: 'none', ids: [], state: undefined, absent: false };
  }
  const r = readIndex(dir, prev, opts.now, opts.reconcile === false ? { reconcile: false } : {});
  if (r.ok) return { via: 'index', ids: r.ids, state: r.state, settled: r.settled };
  // A receive directory nobody has written to yet (a session's own tray, mostly): no listing.
  if (r.why === 'no directory') return { via: 'none', ids: [], state: undefined, absent: true };
  if (opts.list === false) return { via: 'due', why: r.why, state: r.state };
  const { ids, below, sum, failed } = listFrom(dir, opts.floor, opts.reporter);
  return { via: 'listing', why: r.why, ids, below, ...(sum ? { sum } : {}), failed, state: r.state };
}

/** The full listing of a followed directory, cut at `floor` when there is one. */
function listFrom(dir: string, floor: string | undefined, reporter: Reporter | undefined): { ids: string[]; below: number; sum?: NameSum; failed: boolean } {
  let failed = false;
  const told: Reporter = {
    skip: (p, why) => reporter?.skip(p, why),
    unreadable: (p, why) => {
      failed = true;
      reporter?.unreadable?.(p, why);
    },
  };
  if (floor === undefined) {
    const ids = listIds(dir, told);
    return { ids, below: 0, failed };
  }
  const { ids, sum } = walkFrom(dir, floor, told);
  return { ids, below: sum.n, sum, failed };
}

/**
 * What a full listing remembers of the names below its window instead of the names
 * themselves (issue 21 §4/3): their count and the sum of a hash of each name's id (the name
 * less `.signal`). The sum does not depend on the order of a listing, and adding a name adds
 * its hash, so the next listing can tell whether anything below came or went without the
 * history kept in the ledger.
 */
export interface NameSum {
  n: number;
  h: number;
}

/**
 * One term of a NameSum: the first `end` characters of `name` (its id), FNV-1a style but two
 * characters a step, and a final mix. Every step is a bijection of the state, so two ids
 * that differ in one pair of characters never hash alike. Two a step, because every full
 * listing hashes each name below its window: one a step made a listing of 100,000 names
 * about 1.35× slower, this about 1.1× (measured in-process, walking a real directory).
 */
function idHash(name: string, end: number): number {
  let h = 0x811c9dc5;
  let i = 0;
  for (; i + 1 < end; i += 2) h = Math.imul(h ^ (name.charCodeAt(i) | (name.charCodeAt(i + 1) << 16)), 0x01000193);
  if (i < end) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}

/** `s` with the file of message `id` added. */
export function addName(s: NameSum, id: string): NameSum {
  return { n: s.n + 1, h: (s.h + idHash(id, id.length)) >>> 0 };
}

/**
 * The message ids among the names below `below` in `dir` whose inode changed at or after
 * `since` (a directory stamp, ns): files renamed or written in since then, whatever their ids
 * say (a rename sets the ctime of what it moves). A stat per name, so only for a listing whose
 * NameSum says something below its window came or went (issue 21 §4/3).
 */
export function changedSince(dir: string, below: string, since: bigint, reporter?: Reporter): string[] {
  let d: Dir;
  try {
    d = opendirSync(dir, { bufferSize: 1024 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') reporter?.unreadable?.(dir, errnoText(code));
    return [];
  }
  const out: string[] = [];
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      const name = e.name;
      if (!name.endsWith(SIGNAL_EXT) || name.charCodeAt(0) === 46 /* . */) continue;
      const id = name.slice(0, -SIGNAL_EXT.length);
      if (id >= below || !isMessageId(id)) continue;
      const st = statSync(join(dir, name), { bigint: true, throwIfNoEntry: false });
      if (st && st.ctimeNs >= since) out.push(id);
    }
  } catch (err) {
    reporter?.unreadable?.(dir, `cannot list it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    d.closeSync();
  }
  return out.sort();
}

/**
 * Ids in a directory that sort at or above `floor`, ascending, and how many names sort below
 * it. Names only: nothing is read. Walked entry by entry (opendir), never held as one array
 * of every name (see the head of this file).
 */
function walkFrom(dir: string, floor: string, reporter: Reporter): { ids: string[]; sum: NameSum } {
  let d: Dir;
  try {
    d = opendirSync(dir, { bufferSize: 1024 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') reporter.unreadable?.(dir, errnoText(code));
    return { ids: [], sum: { n: 0, h: 0 } };
  }
  const out: string[] = [];
  let below = 0;
  let h = 0;
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      const name = e.name;
      if (!name.endsWith(SIGNAL_EXT) || name.charCodeAt(0) === 46 /* . */) continue;
      // A cheap, conservative first cut on the whole name, then the exact comparison.
      if (name < floor) {
        below++;
        h = (h + idHash(name, name.length - SIGNAL_EXT.length)) >>> 0;
        continue;
      }
      const id = name.slice(0, -SIGNAL_EXT.length);
      if (id < floor) {
        below++;
        h = (h + idHash(name, name.length - SIGNAL_EXT.length)) >>> 0;
      } else if (isMessageId(id)) out.push(id);
    }
  } catch (err) {
    reporter.unreadable?.(dir, `cannot list it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    d.closeSync();
  }
  return { ids: out.sort(), sum: { n: below, h } };
}

// ---------------------------------------------------------------------------------------
// Following the tail loosely

/** What a loose follower remembers of one directory (in memory: the relay keeps it). */
export interface TailState {
  /** The chain (follow above): moved on only while it explains the directory. */
  index: IndexState | undefined;
  /** Where the index was read to: new ids come from here, explained or not. */
  tail: IndexTail | undefined;
  /** Since when the chain has not explained the directory, and when it was last checked. */
  unexplained: number | undefined;
  checked: number;
}

export function newTailState(): TailState {
  return { index: undefined, tail: undefined, unexplained: undefined, checked: 0 };
}

interface TailOptions {
  now: number;
  /** How long the chain may leave the directory's changes unexplained before a full listing. */
  patience: number;
  /** How often an unexplained chain is checked again meanwhile. */
  every: number;
  reporter?: Reporter;
}

type TailFollowed =
  | { via: 'none'; ids: string[] }
  /** `recheckAt`: the chain is unexplained; look again by then, when it would be listed. */
  | { via: 'index'; ids: string[]; recheckAt?: number }
  | { via: 'listing'; ids: string[] };

/**
 * The same rule, for a reader that must not list a busy directory on every write (the relay's
 * outbound side): the ids appended to the index are taken as they come, explained or not,
 * and the chain that vouches nothing was written without a line is checked now and then; a
 * directory it leaves unexplained for `patience` is listed in full. While writers are busy
 * the chain is unexplained most of the time (each write changes the directory before its line
 * is appended), so listing at the first gap would list a growing directory on every look; a
 * file written without a line waits at most `patience`. Updates `st` in place.
 */
export function followTail(dir: string, st: TailState, opts: TailOptions): TailFollowed {
  const { now } = opts;
  const t = readIndexTail(dir, st.tail);
  if (t === null) {
    // No index to read (never written through attend, or not a plain file): the follower
    // says whether anything changed since the last listing, and lists when it did.
    const f = follow(dir, st.index, { now, ...(opts.reporter ? { reporter: opts.reporter } : {}) });
    Object.assign(st, { index: f.state, tail: undefined, unexplained: undefined, checked: now });
    return f.via === 'listing' ? { via: 'listing', ids: f.ids } : { via: f.via === 'none' ? 'none' : 'index', ids: f.via === 'index' ? f.ids : [] };
  }
  if (!t.reset && st.index !== undefined) {
    st.tail = t.tail;
    if (st.unexplained === undefined || now - st.checked >= opts.every) {
      st.checked = now;
      const f = follow(dir, st.index, { now, list: false });
      if (f.via === 'index') {
        st.index = f.state;
        st.unexplained = undefined;
      } else if (f.via === 'due' && f.why === 'unexplained change') st.unexplained ??= now;
      else st.unexplained = Number.NEGATIVE_INFINITY;
    }
    if (st.unexplained === undefined) return { via: 'index', ids: t.ids };
    if (now - st.unexplained < opts.patience) return { via: 'index', ids: t.ids, recheckAt: st.unexplained + opts.patience };
  }
  // In full.
  const f = follow(dir, undefined, { now, ...(opts.reporter ? { reporter: opts.reporter } : {}) });
  Object.assign(st, { index: f.state, tail: t.tail, unexplained: undefined, checked: now });
  return f.via === 'listing' ? { via: 'listing', ids: f.ids } : { via: 'none', ids: [] };
}
