// The chat's history: the first load of the newest messages and older pages on scroll-back,
// newest first across every scope directory, from the listing caches
// (tools/bus/store/listing-cache.ts). The listings stay open after the load, so scroll-back
// walks them and the arrivals scanner (arrivals.ts) can ask whether an id was history
// without listing anything in full.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  entryTime,
  type IndexState,
  ListingCorrupt,
  listScopes,
  type Message,
  mergeDescending,
  type Placed,
  readMessage,
  type Reporter,
  type ScopeListing,
  signalsDir,
  withListings,
} from '../../bus/store/index.js';

export interface Page {
  messages: Message[];
  hasOlder: boolean;
}

interface HistoryDeps {
  root: string;
  /** Wall-clock ms, for the listing caches. */
  now(): number;
  reporter: Reporter;
  /** False for a message that must not be shown (unreadable, or held by the gate: notices.ts). */
  admit(m: Message | null): m is Message;
}

export interface History {
  /** The newest `limit` messages; closes and replaces whatever an earlier load held. */
  loadInitial(limit: number): Page;
  /** Messages older than the oldest loaded one, newest first up to `limit`. */
  loadOlder(limit: number): Page;
  /** Whether `id` in scope directory `dir` was on disk at the first load. */
  has(dir: string, id: string): boolean;
  /** Where `dir`'s index was at the first load (none for a directory made since). */
  mark(dir: string): IndexState | undefined;
  /**
   * The follower fell back to a full listing of `dir`: every id in it is about to be asked
   * after, so answer from a set of the listing's ids, made once, rather than a lookup each.
   */
  expectListing(dir: string): void;
  close(): void;
}

/** What the first load saw of one directory. */
interface Seen {
  listing: ScopeListing;
  ids?: Set<string>;
  mark: IndexState | undefined;
}

export function createHistory(deps: HistoryDeps): History {
  const { root, reporter } = deps;
  const sigDir = signalsDir(root);
  const seenAt = new Map<string, Seen>();
  // `${dir}/${id}` handed to the screen: history whatever a later lookup says.
  const taken = new Set<string>();
  let older: { peek(): Placed | null; next(): Placed | null } | null = null;

  /** Up to `limit` distinct ids from the walk, newest first (a fan-out's copies come along). */
  function take(limit: number): Page {
    if (!older) return { messages: [], hasOlder: false };
    const ids = new Set<string>();
    const out: Message[] = [];
    for (let p = older.peek(); p !== null; p = older.peek()) {
      if (!ids.has(p.entry.id) && ids.size >= limit) break;
      older.next();
      ids.add(p.entry.id);
      taken.add(`${p.listing.dirName}/${p.entry.id}`);
      const m = readMessage(root, p.listing.scope, p.entry.id, reporter);
      if (deps.admit(m)) out.push(m);
    }
    return { messages: out, hasOlder: older.peek() !== null };
  }

  function close(): void {
    for (const s of seenAt.values()) s.listing.close();
    seenAt.clear();
    older = null;
  }

  return {
    loadInitial(limit) {
      try {
        mkdirSync(sigDir, { recursive: true, mode: 0o700 });
      } catch {
        // reported by the scope watch's first rescan
      }
      close();
      // A listing cache that does not read as written is rebuilt, once (the cache's own retry).
      try {
        return withListings(
          root,
          listScopes(root),
          { now: deps.now(), reporter },
          (ls) => {
            seenAt.clear();
            for (const l of ls) seenAt.set(l.dirName, { listing: l, mark: l.mark });
            older = mergeDescending(ls);
            return take(limit);
          },
          { keep: true },
        );
      } catch (err) {
        // The listings were closed with the attempt that failed.
        seenAt.clear();
        older = null;
        throw err;
      }
    },
    loadOlder(limit) {
      try {
        return take(limit);
      } catch (err) {
        if (!(err instanceof ListingCorrupt)) throw err;
        older = null;
        return { messages: [], hasOlder: false };
      }
    },
    has(dir, id) {
      if (taken.has(`${dir}/${id}`)) return true;
      const seen = seenAt.get(dir);
      if (!seen) return false;
      if (seen.ids) return seen.ids.has(id);
      try {
        return seen.listing.lookup(id, (x) => entryTime(join(sigDir, dir), x)) !== null;
      } catch {
        return false;
      }
    },
    mark: (dir) => seenAt.get(dir)?.mark,
    expectListing(dir) {
      const seen = seenAt.get(dir);
      if (!seen || seen.ids) return;
      try {
        seen.ids = new Set(seen.listing.all().map((e) => e.id));
      } catch {
        seen.ids = new Set();
      }
    },
    close,
  };
}
