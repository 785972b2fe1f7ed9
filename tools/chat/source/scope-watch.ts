// When and where the arrivals scanner looks: fs.watch on signals/ (a scope directory made or
// removed) and on every scope directory (a file written), with a periodic rescan behind them,
// because inotify can drop events under load and a directory that is removed and recreated
// needs a new watch. A bus directory that vanishes is said on the status line until it is back.
// Every rescan ends by naming the channels, so tabs follow directories made and removed.

import { existsSync, type FSWatcher, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { listScopes, scopeOfDirName, signalsDir } from '../../bus/store/index.js';
import type { Timers } from './timers.js';

export const RESCAN_MS = 1000;

interface ScopeWatchDeps {
  root: string;
  timers: Timers;
  rescanMs?: number;
  /** Look at scope directory `dir` in full (the follower decides how). */
  scan(dir: string): void;
  /** A watch event for `name` in scope directory `dir`. */
  file(dir: string, name: string): void;
  /** null clears what the watch said before. */
  status(text: string | null): void;
  /** The channel names with a directory on the bus, after every rescan and new channel directory. */
  channels(names: string[]): void;
}

interface ScopeWatch {
  /** Rescan now, then every rescanMs. */
  start(): void;
  stop(): void;
  /** One rescan (start calls it; tests may too). */
  rescan(): void;
}

/** Channel names with a directory on the bus. */
export function channelDirs(root: string): string[] {
  return listScopes(root).flatMap((s) => (s.kind === 'channel' ? [s.name] : []));
}

export function createScopeWatch(deps: ScopeWatchDeps): ScopeWatch {
  const sigDir = signalsDir(deps.root);
  const watchers = new Map<string, FSWatcher>();
  let rootWatcher: FSWatcher | null = null;
  let missing = false;
  let cancel: (() => void) | null = null;

  function watchDir(dir: string): void {
    if (watchers.has(dir)) return;
    try {
      const w = watch(join(sigDir, dir), (_ev, name) => {
        if (typeof name === 'string') deps.file(dir, name);
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

  function watchRoot(): void {
    try {
      rootWatcher = watch(sigDir, (_ev, name) => {
        if (typeof name === 'string' && scopeOfDirName(name)) {
          watchDir(name);
          deps.scan(name);
          if (name.startsWith('@')) deps.channels(channelDirs(deps.root));
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

  function rescan(): void {
    if (!existsSync(sigDir)) {
      if (!missing) {
        missing = true;
        closeAll();
        deps.status(`the bus directory ${sigDir} is gone; waiting for it to come back`);
      }
      return;
    }
    if (missing) {
      missing = false;
      deps.status(null);
    }
    if (!rootWatcher) watchRoot();
    let names: string[];
    try {
      names = readdirSync(sigDir);
    } catch {
      names = [];
    }
    for (const dir of names) {
      if (!scopeOfDirName(dir)) continue;
      watchDir(dir);
      deps.scan(dir);
    }
    for (const [dir, w] of [...watchers]) {
      if (!names.includes(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    deps.channels(channelDirs(deps.root));
  }

  return {
    rescan,
    start() {
      rescan();
      cancel = deps.timers.every(deps.rescanMs ?? RESCAN_MS, rescan);
    },
    stop() {
      cancel?.();
      cancel = null;
      closeAll();
    },
  };
}
