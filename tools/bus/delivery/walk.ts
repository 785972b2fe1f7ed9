// The walk over a session's receive directories for one delivery cycle: per directory, the
// ids at or above its watermark, by the one follower (tools/bus/store/follower.ts: the index
// hint while it explains every change since the last cycle, else a full listing, cut at the
// watermark), and the late arrivals below the watermark, noticed by their arrival whatever
// their ids say (issue 21 §4/3): the ids the index names below it, and, from a full listing,
// the files that no index line announced (IndexState.lmark above it, IndexState.lsum below
// the last full listing's mark). For a cold start of #open or a channel, the recent ids from
// the scope's listing cache instead of a listing.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { idFloor, isMessageId } from '../../wire/ids.js';
import { readChannels } from '../channels/membership.js';
import { type IndexState, NO_INDEX, indexedIdsBetween } from '../store/dir-index.js';
import { addName, changedSince, follow } from '../store/follower.js';
import { scopeDir, scopeDirName } from '../store/layout.js';
import { idsFrom } from '../store/listing.js';
import { cachedListing } from '../store/listing-cache.js';
import { type Reporter, SIGNAL_EXT } from '../store/messages.js';
import { VERIFY_CAP } from '../trust/held.js';
import { SIG_EXT } from '../trust/signing.js';
import { COLD_RECENT_MS, type DirListing, type Ledger, joinMark } from './plan.js';
import { receiveScopes } from './receive.js';

/**
 * Each receive directory's new ids. A channel joined since the ledger began starts at the
 * join (what came before is owed only through an invite), so its watermark is set first.
 */
export function readDirs(root: string, who: Identity, ledger: Ledger, cold: boolean, now: number, reporter: Reporter, reconcile = true): DirListing[] {
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
    const listed = listDir(scopeDir(root, scope), scope, dirName, {
      mark,
      prev: ledger.index[dirName],
      now,
      reporter,
      reconcile,
      // A directory with no watermark yet starts by the cold-start rule: #open and channels
      // show only what is recent, so only recent names are kept (the rest is counted).
      ...(mark === undefined && scope.kind !== 'tray' ? { coldFloor: idFloor(now - COLD_RECENT_MS) } : {}),
    });
    // More new ids than one pass verifies, or a tray's cold start: signed messages are read
    // first (plan.ts); which ids have a signature beside them, from one listing.
    if (listed.ids.length > VERIFY_CAP || (mark === undefined && scope.kind === 'tray' && listed.ids.length > 0)) listed.signed = signedIds(scopeDir(root, scope));
    return listed;
  });
}

/** The ids in `dir` with a signature file beside them (`<id>.sig`), from one listing. */
function signedIds(dir: string): Set<string> {
  const out = new Set<string>();
  try {
    for (const name of readdirSync(dir)) if (name.endsWith(SIG_EXT)) out.add(name.slice(0, -SIG_EXT.length));
  } catch {
    // The listing just read it; gone since: nothing is signed.
  }
  return out;
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
}

/**
 * The ids at or above `mark` in one directory, by the follower (tools/bus/store/follower.ts):
 * from its index hint when that explains every change since the last cycle, else from a full
 * listing. And the late arrivals below it (issue 21 §4/3: what arrived since the last cycle,
 * whatever its id says): ids the index names below the watermark, and, from a full listing,
 * the files the previous full listing did not have and that no index line announced since.
 */
function listDir(dir: string, scope: Scope, dirName: string, o: ListOptions): DirListing {
  const { mark, prev, now, reporter, coldFloor } = o;
  // The window of a full listing: the watermark (a cold start: the cold-start floor), or the
  // last full listing's mark below it when the files the index missed since are looked for.
  const missable = prev?.lmark !== undefined && mark !== undefined && prev.lmark < mark ? prev : undefined;
  const window = missable ? missable.lmark : (mark ?? coldFloor);
  const f = follow(dir, prev, { now, reporter, reconcile: o.reconcile, ...(window !== undefined ? { floor: window } : {}) });
  // Refused (a symlinked directory, issue #10 item 4): nothing in it is delivered.
  if (f.via === 'none' && !f.absent) return { scope, dirName, ids: [], index: undefined };
  // Nothing there yet (a session's own tray, mostly): what the directory will hold when it
  // comes arrived after this cycle, whatever its ids say (its first mail may be an import a
  // day old). The state says so: an empty listing, kept as it was while the directory stays
  // away (the one from before it went, if it did).
  if (f.via === 'none') return { scope, dirName, ids: [], index: prev ?? absentState(now) };
  if (f.via === 'listing') {
    const all = f.ids;
    const ids = mark === undefined ? all : all.filter((id) => id >= mark);
    const late = new Set<string>();
    // Late arrivals an earlier cycle found and did not deliver yet (more than one wake shows).
    if (mark !== undefined) for (const id of prev?.known ?? []) if (id < mark) late.add(id);
    // The index lines since the last full listing: what they name was offered from the index.
    const indexed = prev && f.state && prev.loff !== undefined ? indexedSince(dir, prev, f.state) : null;
    const found: string[] = [];
    if (prev && f.state && indexed && mark !== undefined && !f.failed) {
      // Files the index missed since the last full listing: made after it, below the watermark
      // now, never seen by it and without a line since (IndexState.lmark).
      if (missable) {
        const seen = new Set(missable.lseen);
        for (const id of all) if (id < mark && !indexed.has(id) && !seen.has(id)) found.push(id);
      }
      // Below the last full listing's mark, what came since (a file written by hand with an
      // id minutes or days old, a copy): only when the names there are not the ones it saw.
      if (prev.lsum !== undefined && prev.lmark !== undefined && window !== undefined && window <= prev.lmark && f.sum) {
        const P = prev.lmark;
        let sum = f.sum;
        for (const id of all) if (id < P) sum = addName(sum, id);
        if (sum.n !== prev.lsum.n || sum.h !== prev.lsum.h) {
          const raced = new Set(prev.lraced);
          for (const id of changedSince(dir, P, BigInt(prev.lsum.at), reporter)) if (id < mark && !indexed.has(id) && !raced.has(id)) found.push(id);
        }
      }
    }
    for (const id of found) late.add(id);
    if (f.state) {
      const lmark = idFloor(now);
      // Without a window the listing named every id, and the sum is theirs below lmark.
      let lsum = f.sum ?? (window === undefined ? { n: 0, h: 0 } : undefined);
      if (lsum) for (const id of all) if (id < lmark) lsum = addName(lsum, id);
      // What this listing offers that changed after its own stamp may have landed while it
      // listed; the next listing's look below its mark must not take it for new.
      const raced = changedAfter(dir, found, BigInt(f.state.mtime));
      Object.assign(f.state, {
        lmark,
        loff: f.state.off,
        lseen: all.filter((id) => id >= lmark),
        ...(lsum && !f.failed && /^\d+$/.test(f.state.mtime) ? { lsum: { ...lsum, at: f.state.mtime } } : {}),
        ...(raced.length > 0 ? { lraced: raced } : {}),
      });
    }
    return { scope, dirName, ids, index: f.state, ...(late.size > 0 ? { late: [...late].sort() } : {}), ...(mark === undefined && coldFloor !== undefined ? { older: f.below } : {}) };
  }
  // An index line below the watermark is a late arrival, whatever its id says: a line is read
  // once (by offset), so it is news; a brand-new reader's first look at a directory is a full
  // listing (first sight), which keeps the cold-start rule.
  const set = new Set<string>();
  const late = new Set<string>();
  for (const id of [...f.state.known, ...f.ids]) {
    if (!isMessageId(id)) continue;
    if (mark === undefined || id >= mark) set.add(id);
    else late.add(id);
  }
  return { scope, dirName, ids: [...set].sort(), index: f.state, ...(late.size > 0 ? { late: [...late].sort() } : {}), ...(f.settled ? {} : { unsettled: true }) };
}

/**
 * The ids with a line in the index since the listing `prev` remembers, up to `now`'s offset:
 * what a cycle may have offered from the index since (and a listing must not offer again);
 * null when that cannot be told (the index was replaced or cannot be read: the caller treats
 * the range as consumed, as it did before). A directory that had no index then offered none:
 * with no index every change is listed (dir-index.ts readIndex), never read from lines.
 */
function indexedSince(dir: string, prev: IndexState, now: IndexState): Set<string> | null {
  if (prev.file === NO_INDEX) return new Set();
  return prev.file === now.file ? indexedIdsBetween(dir, prev.loff!, now.off) : null;
}

/** A directory that is not there yet, as an empty full listing at `now` would leave it. */
function absentState(now: number): IndexState {
  return { file: NO_INDEX, off: 0, mtime: '0', listed: now, known: [], lmark: idFloor(now), loff: 0, lseen: [], lsum: { n: 0, h: 0, at: '0' } };
}

/** Those of `ids` in `dir` whose inode changed at or after `stamp` (ns). */
function changedAfter(dir: string, ids: string[], stamp: bigint): string[] {
  return ids.filter((id) => {
    const st = statSync(join(dir, `${id}${SIGNAL_EXT}`), { bigint: true, throwIfNoEntry: false });
    return st !== undefined && st.ctimeNs >= stamp;
  });
}
