// The listing cache (issue #12 §2, "listings cost O(what they show")): per scope directory,
// the ids it holds in time order and, per id, what a listing needs without opening the
// message — `re` for threads and, in a tray, the sender and addressees as this machine reads
// them (mail to a sibling at the same origin is not ours, tools/wire/visibility.ts). It is derived data and never
// the truth: whatever goes wrong with it costs a full listing, never a wrong answer for long.
//
//   <root>/cache/listing/<scope dir>/state.json   where the cache is in the directory's
//                                                 .index, counts, and the newest entries
//   <root>/cache/listing/<scope dir>/<gen>.ids    the sorted base, never changed once written
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
// ids still there. A call with nothing new writes nothing.
//
// The base file has two sections, both sorted, so the newest page, page N, `--before` and a
// message's replies are found by reading a few blocks of it rather than parsing it:
//
//   entries:  <id> <time> <re> [<from> <to>]\n    by (time, id), the order every listing uses
//   replies:  <re> <id>\n                         by (re, id)
//
// `time` is `=` when it is the id's own (tools/wire/ids.ts idTime), else the file's mtime in
// ms as readMessage gives it; `re` is `.` for none and `?` for a file that could not be read
// when it was listed (read it to know). `from` and `to` are written for trays only,
// with `%` and white space percent-encoded. Entries since the base was written live in
// state.json (`tail`) until there are enough of them to write a new base.

import { closeSync, fstatSync, openSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, constants as fsc } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Scope, addressees, resolveEnvelope } from '../../wire/envelope.js';
import { idTime, isMessageId } from '../../wire/ids.js';
import { audienceOf, maySee } from '../../wire/visibility.js';
import { readAll, writeFileAtomic } from './atomic.js';
import { idFloor } from '../../wire/ids.js';
import { type IndexRead, type IndexState, NO_INDEX, dirStamp, readIndex } from './dir-index.js';
import { cacheDir, rootOfScopeDir, scopeDir, scopeDirName } from './layout.js';
import { type Reporter, SIGNAL_EXT, listIds, readParties, readSignalFile, scopeDirProblem } from './messages.js';

// 2: a tray entry's sender and addressees are read as readMessage reads them, localized when
// the message is another machine's (issue 19); a version-1 cache kept them raw.
const VERSION = 2;
const STATE = 'state.json';
const BLOCK = 64 * 1024;
/** Blocks of a base file kept in memory per open listing. */
const BLOCKS_KEPT = 64;
/** A base file older than this and no longer named by the state is removed. */
const ORPHAN_MS = 60_000;

export function listingCacheDir(root: string, dirName: string): string {
  return join(cacheDir(root), 'listing', dirName);
}

/** One id of a scope directory, as the cache knows it. */
export interface Entry {
  id: string;
  /** What readMessage says: the id's own time, else the file's mtime (ms). */
  time: number;
  /** The file could not be read when it was listed: read it to know anything else. */
  unknown?: true;
  re?: string;
  /**
   * Trays only: the sender's id and the `to` field, as readMessage reads them (a message of
   * another machine's localized, tools/bus/trust/origin.ts), so tools/wire/visibility.ts
   * answers for an entry what it answers for its message.
   */
  fromId?: string;
  to?: string;
}

/** A position in time order: (time, id), as tools/bus/store/messages.ts sortMessages orders messages. */
export interface Key {
  time: number;
  id: string;
}

export function compareKeys(a: Key, b: Key): number {
  return a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A cache that does not read as written (edited, cut short): the caller rebuilds it. */
export class ListingCorrupt extends Error {
  /** The cache's directory (listingCacheDir). */
  readonly cache: string;
  constructor(file: string) {
    super(`listing cache ${file} is corrupt`);
    this.cache = dirname(file);
  }
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

interface Counts {
  /** Every entry, unreadable ones included (`attend status` counts files). */
  n: number;
  /** Entries that could not be read. */
  bad: number;
  /** Trays: readable entries addressed to nobody in particular (everyone's). */
  open: number;
  /** Trays: per party (sender or addressee), readable addressed entries it is party to. */
  parties: Record<string, number>;
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
// Lines

function esc(v: string): string {
  if (v === '') return '%';
  return v.replace(/[%\s]/g, (c) => encodeURIComponent(c));
}

function unesc(v: string): string {
  if (v === '%') return '';
  return v.includes('%') ? decodeURIComponent(v) : v;
}

export function formatEntry(e: Entry, tray: boolean): string {
  const t = idTime(e.id) === e.time ? '=' : String(e.time);
  if (e.unknown) return `${e.id} ${t} ?`;
  const re = e.re ?? '.';
  return tray ? `${e.id} ${t} ${re} ${esc(e.fromId ?? '')} ${esc(e.to ?? '')}` : `${e.id} ${t} ${re}`;
}

export function parseEntry(line: string, tray: boolean): Entry | null {
  const f = line.split(' ');
  const id = f[0] ?? '';
  if (!isMessageId(id) || f[1] === undefined || f[2] === undefined) return null;
  const time = f[1] === '=' ? idTime(id) : Number(f[1]);
  if (time === null || !Number.isFinite(time)) return null;
  if (f[2] === '?') return f.length === 3 ? { id, time, unknown: true } : null;
  const e: Entry = { id, time };
  if (f[2] !== '.') {
    if (!isMessageId(f[2])) return null;
    e.re = f[2];
  }
  if (tray) {
    if (f.length !== 5) return null;
    try {
      e.fromId = unesc(f[3]!);
      e.to = unesc(f[4]!);
    } catch {
      return null;
    }
  } else if (f.length !== 3) return null;
  return e;
}

// ---------------------------------------------------------------------------------------
// The base file, read by blocks

class Blocks {
  private readonly cache = new Map<number, Buffer>();
  constructor(
    readonly fd: number,
    readonly size: number,
  ) {}

  private block(i: number): Buffer {
    let b = this.cache.get(i);
    if (b === undefined) {
      b = readAll(this.fd, Math.min(BLOCK, this.size - i * BLOCK), i * BLOCK);
      if (this.cache.size >= BLOCKS_KEPT) this.cache.delete(this.cache.keys().next().value as number);
      this.cache.set(i, b);
    }
    return b;
  }

  /** The first newline at or after `pos` and before `end`, or -1. */
  nextNewline(pos: number, end: number): number {
    while (pos < end) {
      const bi = Math.floor(pos / BLOCK);
      const b = this.block(bi);
      const k = b.indexOf(10, pos - bi * BLOCK);
      if (k >= 0) return bi * BLOCK + k < end ? bi * BLOCK + k : -1;
      if (b.length < BLOCK) return -1;
      pos = (bi + 1) * BLOCK;
    }
    return -1;
  }

  /** The last newline before `pos` and at or after `start`, or -1. */
  prevNewline(pos: number, start: number): number {
    while (pos > start) {
      const bi = Math.floor((pos - 1) / BLOCK);
      const b = this.block(bi);
      const k = b.lastIndexOf(10, pos - 1 - bi * BLOCK);
      if (k >= 0) return bi * BLOCK + k >= start ? bi * BLOCK + k : -1;
      pos = bi * BLOCK;
    }
    return -1;
  }

  text(a: number, b: number): string {
    if (b <= a) return '';
    const first = Math.floor(a / BLOCK);
    const last = Math.floor((b - 1) / BLOCK);
    if (first === last) return this.block(first).toString('utf8', a - first * BLOCK, b - first * BLOCK);
    const parts: Buffer[] = [];
    for (let i = first; i <= last; i++) {
      const blk = this.block(i);
      parts.push(blk.subarray(i === first ? a - i * BLOCK : 0, i === last ? b - i * BLOCK : blk.length));
    }
    return Buffer.concat(parts).toString('utf8');
  }
}

/** One sorted section of a base file: lines in [start, end), each ending in a newline. */
class Section {
  constructor(
    private readonly blocks: Blocks,
    readonly start: number,
    readonly end: number,
    private readonly where: string,
  ) {}

  /** The line that begins at `s`, and where the next one begins. */
  lineAt(s: number): { text: string; next: number } {
    const nl = this.blocks.nextNewline(s, this.end);
    if (nl < 0) throw new ListingCorrupt(this.where);
    return { text: this.blocks.text(s, nl), next: nl + 1 };
  }

  /** The line that ends just before `pos` (a line start or the end), and where it begins. */
  lineBefore(pos: number): { text: string; start: number } {
    const nl = this.blocks.prevNewline(pos - 1, this.start);
    const s = nl < 0 ? this.start : nl + 1;
    return { text: this.blocks.text(s, pos - 1), start: s };
  }

  /** The first line start at or after `pos`. */
  private lineStartFrom(pos: number): number {
    if (pos <= this.start) return this.start;
    const nl = this.blocks.nextNewline(pos - 1, this.end);
    return nl < 0 ? this.end : nl + 1;
  }

  /** Where the first line with `below(line)` false begins (the lines are sorted by it). */
  lowerBound(below: (line: string) => boolean): number {
    let lo = this.start;
    let hi = this.end;
    while (hi - lo > 2048) {
      const s = this.lineStartFrom((lo + hi) >> 1);
      if (s >= hi) break;
      const { text, next } = this.lineAt(s);
      if (below(text)) lo = next;
      else hi = s;
    }
    while (lo < hi) {
      const { text, next } = this.lineAt(lo);
      if (!below(text)) return lo;
      lo = next;
    }
    return lo;
  }
}

// ---------------------------------------------------------------------------------------
// A scope's listing in memory

/** Entries newest first; `next()` gives null at the end. */
export interface Cursor {
  peek(): Entry | null;
  next(): Entry | null;
}

export class ScopeListing {
  private readonly tailById: Map<string, Entry>;
  private last: Entry | undefined;
  constructor(
    readonly scope: Scope,
    readonly dirName: string,
    private readonly counts: Counts,
    /** #open: ids of entries addressed to someone (State.xids). */
    readonly xids: readonly string[],
    /** Entries after the base, in time order. */
    private readonly tail: readonly Entry[],
    private readonly entries: Section | null,
    private readonly replies: Section | null,
    private readonly fd: number | null,
    private readonly where: string,
    /** Where the cache is in the directory's index (what it has taken in). */
    readonly mark: IndexState | undefined,
  ) {
    this.tailById = new Map(tail.map((e) => [e.id, e]));
  }

  get tray(): boolean {
    return this.scope.kind === 'tray';
  }

  /** Every file in the directory, unreadable ones included. */
  get size(): number {
    return this.counts.n;
  }

  /** The readable messages of this scope the reader `who` may see (sibling tray mail left out). */
  countFor(who: string): number {
    if (!this.tray) return this.counts.n - this.counts.bad;
    return this.counts.open + (this.counts.parties[who] ?? 0);
  }

  private parse(text: string): Entry {
    const e = parseEntry(text, this.tray);
    if (!e) throw new ListingCorrupt(this.where);
    return e;
  }

  /** Newest first, starting below `below` when given (strictly older than it). */
  descending(below?: Key): Cursor {
    let pos = this.entries ? (below ? this.entries.lowerBound((t) => compareKeys(this.parse(t), below) < 0) : this.entries.end) : 0;
    let ti = below ? lowerIndex(this.tail, below) - 1 : this.tail.length - 1;
    let baseNext: Entry | null | undefined;
    const sec = this.entries;
    const fromBase = (): Entry | null => {
      if (baseNext !== undefined) return baseNext;
      if (!sec || pos <= sec.start) return (baseNext = null);
      const { text, start } = sec.lineBefore(pos);
      pos = start;
      return (baseNext = this.parse(text));
    };
    const pick = (take: boolean): Entry | null => {
      const b = fromBase();
      const t = ti >= 0 ? (this.tail[ti] as Entry) : null;
      if (!b && !t) return null;
      if (b && (!t || compareKeys(b, t) > 0)) {
        if (take) baseNext = undefined;
        return b;
      }
      if (take) ti--;
      return t;
    };
    return { peek: () => pick(false), next: () => pick(true) };
  }

  /** Entries at or after `from` the reader may see (readable ones only). */
  countFrom(from: Key, who: string): number {
    let n = 0;
    const mine = (e: Entry) => !e.unknown && maySee(this.scope, e, who);
    for (let i = lowerIndex(this.tail, from); i < this.tail.length; i++) if (mine(this.tail[i] as Entry)) n++;
    const sec = this.entries;
    if (!sec) return n;
    let s = sec.lowerBound((t) => compareKeys(this.parse(t), from) < 0);
    while (s < sec.end) {
      const { text, next } = sec.lineAt(s);
      if (mine(this.parse(text))) n++;
      s = next;
    }
    return n;
  }

  /** The entry for `id`, if the directory holds it (as far as the cache knows). */
  lookup(id: string, timeOf: (id: string) => number | null): Entry | null {
    const t = this.tailById.get(id);
    if (t) return t;
    const sec = this.entries;
    if (!sec) return null;
    const time = timeOf(id);
    if (time === null) return null;
    const key = { time, id };
    // What the index names is nearly always newer than everything listed before it.
    if (sec.end > sec.start) {
      this.last ??= this.parse(sec.lineBefore(sec.end).text);
      if (compareKeys(key, this.last) > 0) return null;
    }
    const s = sec.lowerBound((text) => compareKeys(this.parse(text), key) < 0);
    if (s >= sec.end) return null;
    const e = this.parse(sec.lineAt(s).text);
    return e.id === id ? e : null;
  }

  /** Ids of the entries that reply to `id`. */
  children(id: string): string[] {
    const out: string[] = [];
    for (const e of this.tail) if (e.re === id) out.push(e.id);
    const sec = this.replies;
    if (!sec) return out;
    const prefix = `${id} `;
    let s = sec.lowerBound((t) => t < prefix);
    while (s < sec.end) {
      const { text, next } = sec.lineAt(s);
      if (!text.startsWith(prefix)) break;
      out.push(text.slice(prefix.length));
      s = next;
    }
    return out;
  }

  /** Every entry, oldest first (a rebuild, or a reader that needs the whole set once). */
  all(): Entry[] {
    const out: Entry[] = [];
    const sec = this.entries;
    if (sec) {
      let s = sec.start;
      while (s < sec.end) {
        const { text, next } = sec.lineAt(s);
        out.push(this.parse(text));
        s = next;
      }
    }
    return mergeSorted(out, [...this.tail]);
  }

  close(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
    }
  }
}

/** The first index in `xs` (sorted) whose key is at or after `k`. */
function lowerIndex(xs: readonly Entry[], k: Key): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareKeys(xs[mid] as Entry, k) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function mergeSorted(a: Entry[], b: Entry[]): Entry[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: Entry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compareKeys(a[i] as Entry, b[j] as Entry) <= 0 ? (a[i++] as Entry) : (b[j++] as Entry));
  while (i < a.length) out.push(a[i++] as Entry);
  while (j < b.length) out.push(b[j++] as Entry);
  return out;
}

// ---------------------------------------------------------------------------------------
// Reading a message's first line for the cache

/** The time readMessage gives a file: the id's own, else the file's mtime; null when gone. */
export function entryTime(dir: string, id: string): number | null {
  const own = idTime(id);
  if (own !== null) return own;
  try {
    return statSync(join(dir, `${id}${SIGNAL_EXT}`)).mtimeMs;
  } catch {
    return null;
  }
}

/** What the cache records for one file; null when it is gone. Never reports: readers do. */
function readEntry(dir: string, scope: Scope, id: string): Entry | null {
  const path = join(dir, `${id}${SIGNAL_EXT}`);
  const res = readSignalFile(path);
  if (!res.ok) {
    if (res.gone) return null;
    const time = entryTime(dir, id);
    return time === null ? null : { id, time, unknown: true };
  }
  const env = resolveEnvelope(res.envelope, scope);
  const e: Entry = { id, time: idTime(id) ?? res.mtimeMs };
  if (env.re !== undefined) e.re = env.re;
  if (scope.kind === 'tray') {
    // Who may see it is decided on these, so they are read as the message is (issue 19).
    const parties = readParties(rootOfScopeDir(dir), scope, id, path, res.envelope);
    e.fromId = parties.fromId;
    e.to = parties.to;
  } else if (scope.kind === 'open' && addressees(env.to).length > 0) e.to = env.to;
  return e;
}

/** Party ids are text from files: a record without a prototype, so `__proto__` is just an id. */
function partyRecord(from: Record<string, number>): Record<string, number> {
  return Object.assign(Object.create(null) as Record<string, number>, from);
}

function tally(c: Counts, e: Entry, tray: boolean, sign: 1 | -1): void {
  c.n += sign;
  if (e.unknown) {
    c.bad += sign;
    return;
  }
  if (!tray) return;
  // Per party who may see it, so countFor(who) is what maySee(who) would count.
  const audience = audienceOf({ kind: 'tray' }, e);
  if (audience === 'everyone') {
    c.open += sign;
    return;
  }
  for (const p of audience) {
    const v = (c.parties[p] ?? 0) + sign;
    if (v === 0) delete c.parties[p];
    else c.parties[p] = v;
  }
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

/** A listing with nothing in it (a directory that is not there, or cannot be read). */
export function emptyListing(scope: Scope): ScopeListing {
  return new ScopeListing(scope, scopeDirName(scope), { n: 0, bad: 0, open: 0, parties: partyRecord({}) }, [], [], null, null, null, '', undefined);
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

export interface ListingOptions {
  now: number;
  reporter: Reporter;
}

/**
 * The listing of one scope directory, brought up to date with the directory. Reports a
 * directory that cannot be listed (and gives an empty listing), like listIds.
 */
export function openListing(root: string, scope: Scope, opts: ListingOptions): ScopeListing {
  try {
    return refresh(root, scope, opts, false);
  } catch (err) {
    if (!(err instanceof ListingCorrupt)) throw err;
    return refresh(root, scope, opts, true);
  }
}

/**
 * Run `fn` over listings; a cache found corrupt while reading is dropped and `fn` runs again
 * on rebuilt listings, once.
 */
export function withListings<T>(root: string, scopes: Scope[], opts: ListingOptions, fn: (ls: ScopeListing[]) => T): T {
  for (let attempt = 0; ; attempt++) {
    const ls = scopes.map((s) => openListing(root, s, opts));
    try {
      return fn(ls);
    } catch (err) {
      if (!(err instanceof ListingCorrupt) || attempt > 0) throw err;
      for (const l of ls) if (listingCacheDir(root, l.dirName) === err.cache) dropCache(root, l.dirName);
    } finally {
      for (const l of ls) l.close();
    }
  }
}

/** Remove a scope's cache with its directory (cleanup, dissolve): derived data goes with its source. */
export function removeCache(root: string, dirName: string): void {
  rmSync(listingCacheDir(root, dirName), { recursive: true, force: true });
}

/** Forget a scope's cache (the next reader lists the directory and rebuilds it). */
export function dropCache(root: string, dirName: string): void {
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
  const problem = scopeDirProblem(dir);
  if (problem !== null) {
    if (cachedOnly) return null;
    opts.reporter.unreadable?.(dir, problem);
    return emptyListing(scope);
  }
  const cdir = listingCacheDir(root, dirName);
  let st = distrust ? null : readState(cdir);
  let opened = st?.base ? openBase(cdir, st.base) : null;
  if (st?.base && !opened) {
    // The base was replaced between reading the state and opening it: read the state again.
    st = readState(cdir);
    opened = st?.base ? openBase(cdir, st.base) : null;
    if (st?.base && !opened) st = null;
  }
  const now = opts.now;
  const before = dirStamp(dir);
  if (before === '-' || !st || (cachedOnly && !st.index)) {
    if (opened) closeSync(opened.fd);
    if (cachedOnly) return null;
    return before === '-' ? emptyListing(scope) : rebuild(scope, dir, cdir, null, readIndex(dir, undefined, now), before, opts);
  }
  const r = readIndex(dir, toIndexState(st.index), now);
  const view = viewOf(scope, dirName, cdir, st, opened, r.ok ? r.state : toIndexState(st.index));
  if (r.ok) return update(scope, dir, cdir, st, view, r.ids, r.state, opts);
  if (cachedOnly) {
    view.close();
    return null;
  }
  return rebuild(scope, dir, cdir, { st, view }, r, before, opts);
}

/**
 * List the directory in full and write a new cache, reusing what the old one knew of the ids
 * still there. The stamps were taken first, so the listing covers everything they describe.
 */
function rebuild(scope: Scope, dir: string, cdir: string, old: { st: State; view: ScopeListing } | null, r: IndexRead, before: string, opts: ListingOptions): ScopeListing {
  const now = opts.now;
  const tray = scope.kind === 'tray';
  const mark: IndexMark = r.state ? markOf(r.state) : { file: NO_INDEX, off: 0, mtime: before, listed: now };
  let failed = false;
  const ids = listIds(dir, {
    skip: (p, why) => opts.reporter.skip(p, why),
    unreadable: (p, why) => {
      failed = true;
      opts.reporter.unreadable?.(p, why);
    },
  });
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
  if (failed) return emptyListing(scope);
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

/** One entry of a merged walk, with the listing it came from. */
export interface Placed {
  listing: ScopeListing;
  entry: Entry;
}

/**
 * Several listings newest first as one. Copies of one message (a fan-out: the same key in
 * several directories) come in the order of `ls`, as a stable sort of a full read has them.
 */
export function mergeDescending(ls: readonly ScopeListing[], below?: Key): { peek(): Placed | null; next(): Placed | null } {
  const cursors = ls.map((l) => l.descending(below));
  const top = (): number => {
    let at = -1;
    let best: Entry | null = null;
    for (let i = 0; i < cursors.length; i++) {
      const e = (cursors[i] as Cursor).peek();
      if (e && (!best || compareKeys(e, best) > 0)) {
        best = e;
        at = i;
      }
    }
    return at;
  };
  return {
    peek() {
      const at = top();
      return at < 0 ? null : { listing: ls[at] as ScopeListing, entry: (cursors[at] as Cursor).peek() as Entry };
    },
    next() {
      const at = top();
      return at < 0 ? null : { listing: ls[at] as ScopeListing, entry: (cursors[at] as Cursor).next() as Entry };
    },
  };
}

/**
 * The ids of a listing made at or after `floorTime` (at or above its id floor, idFloor),
 * ascending, and how many of its messages sort below: from the newest entries only. An
 * entry's time is its id's time (or, for a file whose id carries none, its mtime), so the
 * walk stops a minute before the floor's time, leaving room for an mtime that trails its id.
 */
export function idsFrom(listing: ScopeListing, floorTime: number): { ids: string[]; older: number } {
  const floor = idFloor(floorTime);
  const ids: string[] = [];
  const cur = listing.descending();
  for (let e = cur.next(); e !== null && e.time >= floorTime - 60_000; e = cur.next()) {
    if (e.id >= floor && isMessageId(e.id)) ids.push(e.id);
  }
  return { ids: ids.sort(), older: Math.max(0, listing.size - ids.length) };
}
