// The operator's view of the bus, as a source of messages: a first load of the newest,
// older pages on scroll-back, and live arrivals from fs.watch on every scope directory with
// a periodic rescan behind it (inotify can drop events under load, and a directory that is
// removed and recreated needs a new watch). Never throws into the UI: trouble becomes a
// status line.

import { existsSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { scopeDirName, scopeOfDirName, signalsDir } from '../bus/layout.js';
import { listIds, listScopes, readMessage, SIGNAL_EXT, type Message, type Reporter } from '../bus/signals.js';
import { readKnownNames } from '../bus/names.js';
import type { Scope } from '../wire/envelope.js';

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
  /** Last known names of parties no longer live (tools/bus/names.ts), shown as gone. */
  knownNames?(): ReadonlyMap<string, string>;
}

interface Entry {
  id: string;
  scope: Scope;
}

export interface SourceOptions {
  root: string;
  /** Rescan interval in ms, the safety net behind fs.watch. */
  rescanMs?: number;
  /** Extra channel names to list (the membership store), read at each rescan. */
  storeChannels?: () => string[];
  /** Arrivals are handed over at most this often, ms (see flush below). */
  batchMs?: number;
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
  const known = new Set<string>(); // `${dir}/${id}` seen
  let loadedOldest: string | null = null;
  let index: Entry[] | null = null; // every id on disk, newest first, built at first load
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
  const watchers = new Map<string, FSWatcher>();
  let rootWatcher: FSWatcher | null = null;
  let timer: NodeJS.Timeout | null = null;
  let pending: Message[] = [];
  let flushScheduled = false;
  let missing = false;

  function buildIndex(): Entry[] {
    const all: Entry[] = [];
    for (const scope of listScopes(root)) {
      const dir = scopeDirName(scope);
      for (const id of listIds(join(sigDir, dir), reporter)) all.push({ id, scope });
    }
    // Ids sort by creation time (tools/wire/ids.ts), so newest first is a string sort.
    return all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  function readEntries(entries: Entry[]): Message[] {
    const out: Message[] = [];
    for (const e of entries) {
      known.add(`${scopeDirName(e.scope)}/${e.id}`);
      const m = readMessage(root, e.scope, e.id, reporter);
      if (m) out.push(m);
    }
    return out;
  }

  /** Take entries until `limit` distinct ids (a fan-out's copies come along). */
  function take(entries: Entry[], limit: number): { picked: Entry[]; rest: boolean } {
    const ids = new Set<string>();
    let i = 0;
    for (; i < entries.length; i++) {
      const e = entries[i] as Entry;
      if (!ids.has(e.id) && ids.size >= limit) break;
      ids.add(e.id);
    }
    return { picked: entries.slice(0, i), rest: i < entries.length };
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
    const scope = scopeOfDirName(dir);
    if (!scope) return;
    if (!existsSync(join(sigDir, dir, name))) return; // a rename away, or a purge
    known.add(key);
    const m = readMessage(root, scope, id, reporter);
    if (!m) return;
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

  function scanDir(dir: string): void {
    for (const id of listIds(join(sigDir, dir), reporter)) if (!known.has(`${dir}/${id}`)) onFile(dir, `${id}${SIGNAL_EXT}`);
  }

  return {
    knownNames: () => readKnownNames(root),
    loadInitial(limit) {
      try {
        mkdirSync(sigDir, { recursive: true, mode: 0o700 });
      } catch {
        // reported by the first rescan
      }
      index = buildIndex();
      const { picked, rest } = take(index, limit);
      // Mark everything older as known: it is history, loaded on scroll-back, not news.
      for (const e of index) known.add(`${scopeDirName(e.scope)}/${e.id}`);
      const last = picked[picked.length - 1];
      loadedOldest = last ? last.id : null;
      index = index.slice(picked.length);
      return { messages: readEntries(picked), hasOlder: rest };
    },
    loadOlder(limit) {
      if (!index || index.length === 0) return { messages: [], hasOlder: false };
      const { picked, rest } = take(index, limit);
      index = index.slice(picked.length);
      const last = picked[picked.length - 1];
      if (last) loadedOldest = last.id;
      return { messages: readEntries(picked), hasOlder: rest };
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
      events = null;
    },
    channelDirs,
  };
}
