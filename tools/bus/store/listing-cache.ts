// The listing cache (issue #12 §2, "listings cost O(what they show")): per scope directory,
// what a listing (tools/bus/store/listing.ts) reads instead of the directory. It is derived
// data and never the truth: whatever goes wrong with it costs a full listing, never a wrong
// answer for long.
//
//   <root>/cache/listing/<scope dir>/state.json   where the cache is in the directory's
//                                                 .index, counts, and the newest entries
//   <root>/cache/listing/<scope dir>/<gen>.ids    the sorted base, never changed once written
//                                                 (tools/bus/store/listing-base.ts)
//
// Outside signals/, so no sensor or chat watch ever wakes for it.
//
// Reading the history is what listings must not do: a `readdir` of 100,000 names alone is
// ~80 ms. So the cache follows the directory's index hint (tools/bus/store/dir-index.ts) from the
// offset it remembers, reading only the new messages' first line, and trusts it exactly as
// far as the ledger does: while the index's mtime stamps explain every change to the
// directory, and at most RECONCILE_MS between full listings. Anything else — no cache, a
// replaced, truncated or garbage index, a deletion (cleanup, purge, dissolve), a file written
// by hand — lists the directory in full and rebuilds, reusing what it already knew of the
// ids still there. A call with nothing new writes nothing. Entries since the base was written
// live in state.json (`tail`) until there are enough of them to write a new base.

import { closeSync, fstatSync, openSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import type { Scope } from '../../wire/envelope.js';
import { isMessageId } from '../../wire/ids.js';
import { writeFileAtomic } from './atomic.js';
import { type IndexState, NO_INDEX, dirStamp } from './dir-index.js';
import { type Followed, follow } from './follower.js';
import { cacheDir, scopeDir, scopeDirName } from './layout.js';
import { Blocks, ListingCorrupt, Section } from './listing-base.js';
import { type Counts, type Entry, compareKeys, entryTime, formatEntry, mergeSorted, parseEntry, partyRecord, readEntry, tally } from './listing-entry.js';
import { ScopeListing, emptyListing } from './listing.js';
import type { Reporter } from './messages.js';

// 2: a tray entry's sender and addressees are read as readMessage reads them, localized when
// the message is another machine's (issue 19); a version-1 cache kept them raw.
// 3: every entry keeps its sender, outside trays too (a person's sent list, issue 24).
const VERSION = 3;
const STATE = 'state.json';
/** A base file older than this and no longer named by the state is removed. */
const ORPHAN_MS = 60_000;

export function listingCacheDir(root: string, dirName: string): string {
  return join(cacheDir(root), 'listing', dirName);
}

interface IndexMark {
  /** `none` when the directory has no index: then its mtime alone is compared. */
  file: string;
  off: number;
  mtime: string;
  listed: number;
}

interface BaseRef {
  name: string;
  bytes: number;
  /** Where the replies section begins. */
  split: number;
}

interface State extends Counts {
  v: number;
  index: IndexMark | null;
  base: BaseRef | null;
  /**
   * #open only: ids of entries addressed to someone. A notice to agents and humans is one id
   * in their trays and in #open (tools/bus/channels/notices.ts): the only copies attend writes into
   * two directories one reader receives, counted once (tools/verbs/inbox.ts countInbox).
   */
  xids: string[];
  /** Ids of entries that could not be read, retried at each refresh. */
  unknown: string[];
  /** Entries not in the base, as lines. */
  tail: string[];
}

// ---------------------------------------------------------------------------------------
// The state file

function readState(cdir: string): State | null {
  let o: Partial<State>;
  try {
    o = JSON.parse(readFileSync(join(cdir, STATE), 'utf8')) as Partial<State>;
  } catch {
    return null;
  }
  const int = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  const strs = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (!o || typeof o !== 'object' || o.v !== VERSION || !int(o.n) || !int(o.bad) || !int(o.open)) return null;
  if (typeof o.parties !== 'object' || o.parties === null || !Object.values(o.parties).every(int)) return null;
  o.parties = partyRecord(o.parties);
  if (!strs(o.xids) || !strs(o.unknown) || !strs(o.tail)) return null;
  const ix = o.index;
  if (ix !== null && (typeof ix !== 'object' || typeof ix.file !== 'string' || !int(ix.off) || typeof ix.mtime !== 'string' || !/^\d{1,30}$/.test(ix.mtime) || typeof ix.listed !== 'number')) return null;
  const b = o.base;
  if (b !== null && (typeof b !== 'object' || typeof b.name !== 'string' || !/^[0-9a-z]{1,40}\.ids$/.test(b.name) || !int(b.bytes) || !int(b.split) || b.split > b.bytes)) return null;
  return o as State;
}

function openBase(cdir: string, base: BaseRef): { fd: number; blocks: Blocks } | null {
  let fd: number;
  try {
    fd = openSync(join(cdir, base.name), fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile() && st.size === base.bytes) return { fd, blocks: new Blocks(fd, st.size) };
  } catch {
    // fall through
  }
  closeSync(fd);
  return null;
}

function viewOf(scope: Scope, dirName: string, cdir: string, st: State, opened: { fd: number; blocks: Blocks } | null, mark: IndexState | undefined): ScopeListing {
  const tray = scope.kind === 'tray';
  const where = join(cdir, st.base?.name ?? STATE);
  const tail: Entry[] = [];
  for (const line of st.tail) {
    const e = parseEntry(line, tray);
    if (!e) throw new ListingCorrupt(join(cdir, STATE));
    tail.push(e);
  }
  tail.sort(compareKeys);
  const entries = opened && st.base ? new Section(opened.blocks, 0, st.base.split, where) : null;
  const replies = opened && st.base ? new Section(opened.blocks, st.base.split, st.base.bytes, where) : null;
  return new ScopeListing(scope, dirName, { n: st.n, bad: st.bad, open: st.open, parties: st.parties }, st.xids, tail, entries, replies, opened?.fd ?? null, where, mark);
}

function toIndexState(m: IndexMark | null): IndexState | undefined {
  return m ? { file: m.file, off: m.off, mtime: m.mtime, listed: m.listed, known: [] } : undefined;
}

function markOf(s: IndexState): IndexMark {
  return { file: s.file, off: s.off, mtime: s.mtime, listed: s.listed };
}

/** Write a state (and a new base when `entries` is given). Never throws: a cache is optional. */
function save(cdir: string, st: State, prevBase: BaseRef | null, entries: Entry[] | null, tray: boolean, now: number): void {
  try {
    if (entries) {
      const lines = entries.map((e) => formatEntry(e, tray));
      const replies = entries.flatMap((e) => (e.re !== undefined && !e.unknown ? [`${e.re} ${e.id}`] : [])).sort();
      const a = lines.length > 0 ? `${lines.join('\n')}\n` : '';
      const b = replies.length > 0 ? `${replies.join('\n')}\n` : '';
      const buf = Buffer.from(a + b, 'utf8');
      const name = `${now.toString(36)}${Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, '0')}.ids`;
      writeFileAtomic(join(cdir, name), buf);
      st.base = { name, bytes: buf.length, split: Buffer.byteLength(a, 'utf8') };
      st.tail = [];
    }
    writeFileAtomic(join(cdir, STATE), JSON.stringify(st));
    if (entries) removeOldBases(cdir, st.base?.name, prevBase?.name, now);
  } catch {
    // Not written: the next reader does this work again; nothing is wrong meanwhile.
  }
}

/**
 * A base no state names any more. The one just replaced goes now (a reader that opened it
 * keeps its descriptor; one that read the old state and finds it gone reads the state
 * again); others — left by two refreshes racing — once they are old enough that no refresh
 * can still be about to name them.
 */
function removeOldBases(cdir: string, keep: string | undefined, replaced: string | undefined, now: number): void {
  let names: string[];
  try {
    names = readdirSync(cdir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.ids') || name === keep) continue;
    try {
      if (name !== replaced && now - statSync(join(cdir, name)).mtimeMs < ORPHAN_MS) continue;
      unlinkSync(join(cdir, name));
    } catch {
      // another reader removed it
    }
  }
}

// ---------------------------------------------------------------------------------------
// Opening a listing: bring the cache up to date, then read from it

interface ListingOptions {
  now: number;
  reporter: Reporter;
}

/**
 * The listing of one scope directory, brought up to date with the directory. Reports a
 * directory that cannot be listed (and gives an empty listing), like listIds.
 */
function openListing(root: string, scope: Scope, opts: ListingOptions): ScopeListing {
  try {
    return refresh(root, scope, opts, false);
  } catch (err) {
    if (!(err instanceof ListingCorrupt)) throw err;
    return refresh(root, scope, opts, true);
  }
}

/**
 * Run `fn` over listings; a cache found corrupt while reading is dropped and `fn` runs again
 * on rebuilt listings, once. The listings are closed after, unless `keep` says the caller
 * keeps those `fn` succeeded on (the chat reads its first load's on for scroll-back); the
 * ones of an attempt that failed are closed either way.
 */
export function withListings<T>(root: string, scopes: Scope[], opts: ListingOptions, fn: (ls: ScopeListing[]) => T, { keep = false } = {}): T {
  for (let attempt = 0; ; attempt++) {
    const ls = scopes.map((s) => openListing(root, s, opts));
    let kept = false;
    try {
      const out = fn(ls);
      kept = keep;
      return out;
    } catch (err) {
      if (!(err instanceof ListingCorrupt) || attempt > 0) throw err;
      for (const l of ls) if (listingCacheDir(root, l.dirName) === err.cache) dropCache(root, l.dirName);
    } finally {
      if (!kept) for (const l of ls) l.close();
    }
  }
}

/** Remove a scope's cache with its directory (cleanup, dissolve): derived data goes with its source. */
export function removeCache(root: string, dirName: string): void {
  rmSync(listingCacheDir(root, dirName), { recursive: true, force: true });
}

/** Forget a scope's cache (the next reader lists the directory and rebuilds it). */
function dropCache(root: string, dirName: string): void {
  try {
    unlinkSync(join(listingCacheDir(root, dirName), STATE));
  } catch {
    // none
  }
}

/**
 * A scope's listing only when its cache is there and the directory's index explains every
 * change since (brought up to date from it); null when that would take a full listing or a
 * rebuild. For a reader that can list the directory itself instead (tools/bus/delivery/ledger.ts).
 */
export function cachedListing<T>(root: string, scope: Scope, opts: ListingOptions, fn: (l: ScopeListing) => T): T | null {
  let l: ScopeListing | null;
  try {
    l = refresh(root, scope, opts, false, true);
  } catch (err) {
    if (!(err instanceof ListingCorrupt)) throw err;
    return null;
  }
  if (l === null) return null;
  try {
    return fn(l);
  } catch (err) {
    if (err instanceof ListingCorrupt) return null;
    throw err;
  } finally {
    l.close();
  }
}

function refresh(root: string, scope: Scope, opts: ListingOptions, distrust: boolean): ScopeListing;
function refresh(root: string, scope: Scope, opts: ListingOptions, distrust: boolean, cachedOnly: true): ScopeListing | null;
function refresh(root: string, scope: Scope, opts: ListingOptions, distrust: boolean, cachedOnly = false): ScopeListing | null {
  const dir = scopeDir(root, scope);
  const dirName = scopeDirName(scope);
  const cdir = listingCacheDir(root, dirName);
  let st = distrust ? null : readState(cdir);
  let opened = st?.base ? openBase(cdir, st.base) : null;
  if (st?.base && !opened) {
    // The base was replaced between reading the state and opening it: read the state again.
    st = readState(cdir);
    opened = st?.base ? openBase(cdir, st.base) : null;
    if (st?.base && !opened) st = null;
  }
  if (cachedOnly && !st?.index) {
    if (opened) closeSync(opened.fd);
    return null;
  }
  const now = opts.now;
  // What a rebuilt cache remembers of a directory whose index is not a file it can read.
  const before = dirStamp(dir);
  const view = st ? viewOf(scope, dirName, cdir, st, opened, toIndexState(st.index)) : null;
  // The one follower (follower.ts): what the index says arrived since the cache's mark, or a
  // full listing to rebuild from. A cold start asking for the cache alone lists nothing.
  const f = follow(dir, st ? toIndexState(st.index) : undefined, { now, ...(cachedOnly ? { list: false } : { reporter: opts.reporter }) });
  if (f.via === 'index' && st && view) return update(scope, dir, cdir, st, view, f.ids, f.state, opts);
  if (f.via !== 'listing') {
    // No directory (nothing there yet), a refused one (told), or a listing the caller did not want.
    view?.close();
    return cachedOnly ? null : emptyListing(scope);
  }
  return rebuild(scope, dir, cdir, st && view ? { st, view } : null, f, before, opts);
}

/**
 * Write a new cache from the follower's full listing, reusing what the old one knew of the ids
 * still there. The stamps were taken first, so the listing covers everything they describe.
 */
function rebuild(scope: Scope, dir: string, cdir: string, old: { st: State; view: ScopeListing } | null, listing: Extract<Followed, { via: 'listing' }>, before: string, opts: ListingOptions): ScopeListing {
  const now = opts.now;
  const tray = scope.kind === 'tray';
  const mark: IndexMark = listing.state ? markOf(listing.state) : { file: NO_INDEX, off: 0, mtime: before, listed: now };
  const ids = listing.ids;
  const known = new Map<string, Entry>();
  if (old) {
    try {
      for (const e of old.view.all()) known.set(e.id, e);
    } catch (err) {
      if (!(err instanceof ListingCorrupt)) throw err;
      known.clear();
    }
    old.view.close();
  }
  if (listing.failed) return emptyListing(scope);
  const oldX = new Set(old?.st.xids ?? []);
  const entries: Entry[] = [];
  const counts: Counts = { n: 0, bad: 0, open: 0, parties: partyRecord({}) };
  const xids: string[] = [];
  const unknown: string[] = [];
  let same = old !== null && known.size === ids.length;
  for (const id of ids) {
    let e = known.get(id);
    const reused = e !== undefined && !e.unknown;
    if (e === undefined) same = false;
    if (!reused) e = readEntry(dir, scope, id) ?? undefined;
    if (!e) continue;
    entries.push(e);
    tally(counts, e, tray, 1);
    if (e.unknown) unknown.push(e.id);
    else if (!tray && (reused ? oldX.has(id) : e.to !== undefined)) xids.push(e.id);
  }
  entries.sort(compareKeys);
  if (old && same && unknown.length === old.st.unknown.length) {
    // A reconcile that found nothing new: only where the cache is in the index changes.
    const next: State = { ...old.st, index: mark };
    save(cdir, next, null, null, tray, now);
    const o = next.base ? openBase(cdir, next.base) : null;
    if (o || !next.base) return viewOf(scope, scopeDirName(scope), cdir, next, o, toIndexState(mark));
  }
  const next: State = { v: VERSION, index: mark, base: null, ...counts, xids, unknown, tail: [] };
  return settle(scope, cdir, next, old?.st.base ?? null, entries, toIndexState(mark), now);
}

/**
 * Save `next` (with a new base made of `entries` when given) and open it. When the cache
 * cannot be written or read back, the answer comes from memory: only slower next time.
 */
function settle(scope: Scope, cdir: string, next: State, prevBase: BaseRef | null, entries: Entry[] | null, mark: IndexState | undefined, now: number, fallback?: () => Entry[]): ScopeListing {
  const tray = scope.kind === 'tray';
  save(cdir, next, prevBase, entries, tray, now);
  const o = next.base ? openBase(cdir, next.base) : null;
  if (o || (!next.base && !entries)) return viewOf(scope, scopeDirName(scope), cdir, next, o, mark);
  const all = entries ?? (fallback ? fallback() : []);
  return viewOf(scope, scopeDirName(scope), cdir, { ...next, base: null, tail: all.map((e) => formatEntry(e, tray)) }, null, mark);
}

/** The cache is trusted: take in what the index says arrived since, and retry unreadable files. */
function update(scope: Scope, dir: string, cdir: string, st: State, view: ScopeListing, ids: string[], mark: IndexState | undefined, opts: ListingOptions): ScopeListing {
  const tray = scope.kind === 'tray';
  const moved = mark !== undefined && (st.index?.off !== mark.off || st.index?.mtime !== mark.mtime || st.index?.file !== mark.file);
  if (ids.length === 0 && st.unknown.length === 0 && !moved) return view;
  const added: Entry[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    if (!isMessageId(id) || seen.has(id)) continue;
    seen.add(id);
    // A rebuild's listing can already hold what the index names after the offset it kept.
    if (view.lookup(id, (x) => entryTime(dir, x)) !== null) continue;
    const e = readEntry(dir, scope, id);
    if (e) added.push(e);
  }
  added.sort(compareKeys);
  const resolved = new Map<string, Entry | null>();
  for (const id of st.unknown) {
    const e = readEntry(dir, scope, id);
    if (!e || !e.unknown) resolved.set(id, e);
  }
  if (added.length === 0 && resolved.size === 0 && !moved) return view;
  const next: State = { ...st, parties: partyRecord(st.parties), xids: [...st.xids], unknown: st.unknown.filter((id) => !resolved.has(id)), tail: [...st.tail], index: mark ? markOf(mark) : st.index };
  for (const e of added) {
    tally(next, e, tray, 1);
    if (e.unknown) next.unknown.push(e.id);
    else if (!tray && e.to !== undefined) next.xids.push(e.id);
    next.tail.push(formatEntry(e, tray));
  }
  let entries: Entry[] | null = null;
  const all = () => mergeSorted(view.all(), [...added]);
  try {
    if (resolved.size > 0) {
      // A file that could not be read now can (or is gone): its line is in the base, so a
      // new base is written.
      entries = [];
      for (const e of all()) {
        if (!resolved.has(e.id)) {
          entries.push(e);
          continue;
        }
        const r = resolved.get(e.id);
        tally(next, e, tray, -1);
        if (!r) continue;
        tally(next, r, tray, 1);
        if (!tray && r.to !== undefined) next.xids.push(r.id);
        entries.push(r);
      }
    } else if (next.tail.length > Math.max(1024, next.n >> 5)) entries = all();
    return settle(scope, cdir, next, st.base, entries, mark, opts.now, all);
  } finally {
    view.close();
  }
}
