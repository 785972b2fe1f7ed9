// The operator's view of the bus, as a source of messages: a first load of the newest,
// older pages on scroll-back, and live arrivals from fs.watch on every scope directory with
// a periodic rescan behind it (inotify can drop events under load, and a directory that is
// removed and recreated needs a new watch). Never throws into the UI: trouble becomes a
// status line.

import { existsSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { scopeOfDirName, signalsDir } from '../bus/store/index.js';
import { listScopes, readMessage, SIGNAL_EXT, type Message, type Reporter } from '../bus/store/index.js';
import { type IndexState, follow } from '../bus/store/index.js';
import { type Placed, type ScopeListing, ListingCorrupt, emptyListing, entryTime, mergeDescending, withListings } from '../bus/store/index.js';
import { readKnownNames } from '../bus/presence/index.js';
import type { Scope } from '../wire/envelope.js';
import { type Reader, createGate } from '../bus/trust/index.js';

export interface SourceEvents {
  arrived(messages: Message[]): void;
  status(text: string | null): void;
  channels(names: string[]): void;
}

export interface BusSource {
  loadInitial(limit: number): { messages: Message[]; hasOlder: boolean };
  /** Messages older than the oldest loaded id, newest first up to `limit`. */
  loadOlder(limit: number): { messages: Message[]; hasOlder: boolean };
  start(events: SourceEvents): void;
  stop(): void;
  /** Channel names with a directory on the bus. */
  channelDirs(): string[];
  /** Last known names of parties no longer live (tools/bus/presence/names.ts), shown as gone. */
  knownNames?(): ReadonlyMap<string, string>;
}

/** What the first load saw of one directory: its history, and where its index was. */
interface Seen {
  listing: ScopeListing;
  /** The listing's ids, made only when a rescan must list the directory in full. */
  ids?: Set<string>;
  index: IndexState | undefined;
}

export interface SourceOptions {
  root: string;
  /** Rescan interval in ms, the safety net behind fs.watch. */
  rescanMs?: number;
  /** Extra channel names to list (the membership store), read at each rescan. */
  storeChannels?: () => string[];
  /** Arrivals are handed over at most this often, ms (see flush below). */
  batchMs?: number;
  /** Who reads (the human at the keyboard), for the gate that holds messages back (issue 14). */
  reader?: Reader;
}

/**
 * At most ~10 arrival updates a second. Every update re-renders the screen (Ink draws whole
 * frames, ~5 ms here) and opens its 16 ms frame throttle, and a keystroke that lands behind
 * one waits for both: at 50 messages/s, one update per message put the keystroke p95 at
 * ~36 ms. Batching keeps arrivals well inside the 250 ms the issue allows (issue #5 §4).
 */
export const ARRIVAL_BATCH_MS = 100;

export function createBusSource(opts: SourceOptions): BusSource {
  const root = opts.root;
  const sigDir = signalsDir(root);
  const known = new Set<string>(); // `${dir}/${id}` seen since the first load
  // History is what the first load's listings (tools/bus/store/listing.ts) hold; arrivals are what
  // they do not. Scroll-back walks the same listings, so nothing is listed in full.
  const seenAt = new Map<string, Seen>();
  let older: { peek(): Placed | null; next(): Placed | null } | null = null;
  const skipped: string[] = [];
  const reporter: Reporter = {
    skip(path, reason) {
      const line = `skipped ${path}: ${reason}`;
      if (skipped.includes(line)) return;
      skipped.push(line);
      events?.status(`${skipped.length} unreadable file${skipped.length > 1 ? 's' : ''} skipped (latest: ${path.split('/').slice(-2).join('/')}: ${reason})`);
    },
    // A directory that cannot be listed (or a refused symlink) is named, never an empty tab (issue #10).
    unreadable(path, reason) {
      events?.status(`cannot read ${path.split('/').slice(-2).join('/')}: ${reason}; its messages are not shown`);
    },
  };
  let events: SourceEvents | null = null;
  // Held messages (bad signature, refused by policy) never reach the screen; a status line
  // counts them and names `attend inbox --held` (tools/bus/trust/gate.ts).
  const gate = createGate(root, opts.reader ?? { id: '', kind: 'human' });
  const held = new Set<string>();
  const admit = (m: Message | null): m is Message => {
    if (!m) return false;
    if (gate.held(m) === null) return true;
    if (!held.has(m.id)) {
      held.add(m.id);
      // A broken policy holds everything: say why, loudly, rather than only counting.
      const broken = gate.broken();
      events?.status(broken ?? `${held.size} message${held.size > 1 ? 's' : ''} held back; attend inbox --held`);
    }
    return false;
  };
  const watchers = new Map<string, FSWatcher>();
  let rootWatcher: FSWatcher | null = null;
  let timer: NodeJS.Timeout | null = null;
  let pending: Message[] = [];
  let flushScheduled = false;
  let missing = false;

  function history(dir: string, id: string): boolean {
    const seen = seenAt.get(dir);
    if (!seen) return false;
    if (seen.ids) return seen.ids.has(id);
    try {
      return seen.listing.lookup(id, (x) => entryTime(join(sigDir, dir), x)) !== null;
    } catch {
      return false;
    }
  }

  function closeListings(): void {
    for (const s of seenAt.values()) s.listing.close();
    seenAt.clear();
    older = null;
  }

  /** Up to `limit` distinct ids from the walk, newest first (a fan-out's copies come along). */
  function take(limit: number): { messages: Message[]; hasOlder: boolean } {
    if (!older) return { messages: [], hasOlder: false };
    const ids = new Set<string>();
    const out: Message[] = [];
    for (let p = older.peek(); p !== null; p = older.peek()) {
      if (!ids.has(p.entry.id) && ids.size >= limit) break;
      older.next();
      ids.add(p.entry.id);
      known.add(`${p.listing.dirName}/${p.entry.id}`);
      const m = readMessage(root, p.listing.scope, p.entry.id, reporter);
      if (admit(m)) out.push(m);
    }
    return { messages: out, hasOlder: older.peek() !== null };
  }

  const batchMs = opts.batchMs ?? ARRIVAL_BATCH_MS;
  let lastFlush = -Infinity;
  let flushTimer: NodeJS.Timeout | null = null;

  function flush(): void {
    flushScheduled = false;
    flushTimer = null;
    lastFlush = performance.now();
    const batch = pending;
    pending = [];
    if (batch.length > 0) events?.arrived(batch);
  }

  function onFile(dir: string, name: string): void {
    if (!name.endsWith(SIGNAL_EXT) || name.startsWith('.')) return;
    const id = name.slice(0, -SIGNAL_EXT.length);
    const key = `${dir}/${id}`;
    if (known.has(key)) return;
    // A watch event on a file of the history (a touch, a chmod) is not an arrival.
    if (history(dir, id)) {
      known.add(key);
      return;
    }
    const scope = scopeOfDirName(dir);
    if (!scope) return;
    if (!existsSync(join(sigDir, dir, name))) return; // a rename away, or a purge
    known.add(key);
    const m = readMessage(root, scope, id, reporter);
    if (!admit(m)) return;
    pending.push(m);
    if (!flushScheduled) {
      flushScheduled = true;
      // After a quiet spell, 5 ms gathers the files of one fan-out (written back to back)
      // into one update; under a stream, the next update waits for its batch slot.
      const wait = Math.max(5, lastFlush + batchMs - performance.now());
      flushTimer = setTimeout(flush, wait);
    }
  }

  function watchDir(dir: string): void {
    if (watchers.has(dir)) return;
    try {
      const w = watch(join(sigDir, dir), (_ev, name) => {
        if (typeof name === 'string') onFile(dir, name);
      });
      w.on('error', () => {
        w.close();
        watchers.delete(dir);
      });
      watchers.set(dir, w);
    } catch {
      // vanished between listing and watching: the rescan tries again
    }
  }

  function closeAll(): void {
    for (const w of watchers.values()) w.close();
    watchers.clear();
    rootWatcher?.close();
    rootWatcher = null;
  }

  function channelDirs(): string[] {
    return listScopes(root).flatMap((s) => (s.kind === 'channel' ? [s.name] : []));
  }

  function rescan(): void {
    if (!existsSync(sigDir)) {
      if (!missing) {
        missing = true;
        closeAll();
        events?.status(`the bus directory ${sigDir} is gone; waiting for it to come back`);
      }
      return;
    }
    if (missing) {
      missing = false;
      events?.status(null);
    }
    if (!rootWatcher) {
      try {
        rootWatcher = watch(sigDir, (_ev, name) => {
          if (typeof name === 'string' && scopeOfDirName(name)) {
            watchDir(name);
            scanDir(name);
            if (name.startsWith('@')) events?.channels([...channelDirs(), ...(opts.storeChannels?.() ?? [])]);
          }
        });
        rootWatcher.on('error', () => {
          rootWatcher?.close();
          rootWatcher = null;
        });
      } catch {
        rootWatcher = null;
      }
    }
    let names: string[] = [];
    try {
      names = readdirSync(sigDir);
    } catch {
      names = [];
    }
    for (const dir of names) {
      if (!scopeOfDirName(dir)) continue;
      watchDir(dir);
      scanDir(dir);
    }
    for (const dir of [...watchers.keys()]) {
      if (!names.includes(dir)) {
        watchers.get(dir)?.close();
        watchers.delete(dir);
      }
    }
    events?.channels([...channelDirs(), ...(opts.storeChannels?.() ?? [])]);
  }

  /**
   * What arrived in `dir` since the last look, by the follower (tools/bus/store/follower.ts):
   * from its index hint when that explains every change, else from a full listing, against
   * the first load's.
   */
  function scanDir(dir: string): void {
    const path = join(sigDir, dir);
    let seen = seenAt.get(dir);
    const f = follow(path, seen?.index, { now: Date.now(), reporter });
    if (f.via === 'listing') {
      if (seen && !seen.ids) {
        try {
          seen.ids = new Set(seen.listing.all().map((e) => e.id));
        } catch {
          seen.ids = new Set();
        }
      }
    }
    if (seen) seen.index = f.state;
    else if (f.state) {
      // A directory made after the first load: everything in it is news, from here on
      // followed by its index.
      seen = { listing: emptyListing(scopeOfDirName(dir) as Scope), ids: new Set(), index: f.state };
      seenAt.set(dir, seen);
    }
    for (const id of f.ids) if (!known.has(`${dir}/${id}`)) onFile(dir, `${id}${SIGNAL_EXT}`);
  }

  return {
    knownNames: () => readKnownNames(root),
    loadInitial(limit) {
      try {
        mkdirSync(sigDir, { recursive: true, mode: 0o700 });
      } catch {
        // reported by the first rescan
      }
      closeListings();
      // A listing cache that does not read as written is rebuilt, once (the cache's own retry);
      // the listings stay open for scroll-back and for telling history from arrivals.
      try {
        return withListings(
          root,
          listScopes(root),
          { now: Date.now(), reporter },
          (ls) => {
            seenAt.clear();
            for (const l of ls) seenAt.set(l.dirName, { listing: l, index: l.mark });
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
    start(ev) {
      events = ev;
      rescan();
      timer = setInterval(rescan, opts.rescanMs ?? 1000);
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = null;
      flushScheduled = false;
      pending = [];
      closeAll();
      closeListings();
      events = null;
    },
    channelDirs,
  };
}
