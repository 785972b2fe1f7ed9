// A scope's listing (issue #12 §2, "listings cost O(what they show"): the ids a scope
// directory holds in time order and, per id, what a listing needs without opening the
// message — `re` for threads and, in a tray, the sender and addressees as this machine reads
// them (mail to a sibling at the same origin is not ours, tools/wire/visibility.ts). It reads from the
// listing cache (tools/bus/store/listing-cache.ts, which opens it brought up to date with the
// directory): the cache's sorted base by blocks (listing-base.ts) and the entries since.
// Here: one listing in memory, several walked newest first as one, and the newest ids of one.

import { closeSync } from 'node:fs';
import { basename } from 'node:path';
import type { Scope } from '../../wire/envelope.js';
import { idFloor, isMessageId } from '../../wire/ids.js';
import { maySee } from '../../wire/visibility.js';
import type { IndexState } from './dir-index.js';
import { scopeDirName } from './layout.js';
import { type Section, ListingCorrupt } from './listing-base.js';
import { type Counts, type Entry, type Key, compareKeys, lowerIndex, mergeSorted, parseEntry, partyRecord } from './listing-entry.js';

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

  /**
   * In a tray, the readable messages that name `who` or that it sent (the audience counts of
   * tools/wire/visibility.ts audienceOf): what of another project's tray is a person's
   * (tools/verbs/inbox.ts). Outside a tray, none.
   */
  countNamed(who: string): number {
    return this.tray ? (this.counts.parties[who] ?? 0) : 0;
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

  /** Entries at or after `from` the reader may see (readable ones only), by `sees` when given, else maySee. */
  countFrom(from: Key, who: string, sees?: (e: Entry) => boolean): number {
    let n = 0;
    const mine = (e: Entry) => !e.unknown && (sees ? sees(e) : maySee(this.scope, e, who));
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

  /** The cache's base file this listing reads (its name never changes contents), or null. */
  get base(): string | null {
    return this.entries ? basename(this.where) : null;
  }

  /**
   * How many entries lie from `a` to `b` (both included, `a` not after `b`), in the base and
   * in the entries since: what a held run (tools/bus/store/verdicts.ts) is checked against
   * before a walk steps over it. The base's part is counted only when `knownBase` (a count
   * found before in the same base file) is not given; it reads the blocks between without
   * parsing a line.
   */
  countBetween(a: Key, b: Key, knownBase?: number): { base: number; tail: number } {
    let tail = 0;
    for (let i = lowerIndex(this.tail, a); i < this.tail.length && compareKeys(this.tail[i] as Entry, b) <= 0; i++) tail++;
    const sec = this.entries;
    if (!sec) return { base: 0, tail };
    if (knownBase !== undefined) return { base: knownBase, tail };
    const s = sec.lowerBound((t) => compareKeys(this.parse(t), a) < 0);
    const e = sec.lowerBound((t) => compareKeys(this.parse(t), b) <= 0);
    return { base: e > s ? sec.countLines(s, e) : 0, tail };
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

/** A listing with nothing in it (a directory that is not there, or cannot be read). */
export function emptyListing(scope: Scope): ScopeListing {
  return new ScopeListing(scope, scopeDirName(scope), { n: 0, bad: 0, open: 0, parties: partyRecord({}) }, [], [], null, null, null, '', undefined);
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
export function mergeDescending(ls: readonly ScopeListing[], below?: Key): { peek(): Placed | null; next(): Placed | null; skipBelow(l: ScopeListing, key: Key): void } {
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
    /** Go on in `l` from below `key` (a stretch stepped over: a held run). */
    skipBelow(l, key) {
      const i = ls.indexOf(l);
      if (i >= 0) cursors[i] = l.descending(key);
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
