// Watching the receive directories, not their files (issue #12 §1). chokidar keeps one
// inotify watch per file it has seen, so a sensor's watches, memory and wake-up cost grew
// with the history (100,000 messages: ~100,000 watches, a good part of the user's limit).
// A directory watch sees every entry renamed into it: one inotify watch per directory,
// whatever the history. Polling (`--poll`, or when native events never arrive) stats each
// directory instead, whose mtime changes when an entry is added.
//
// A directory that vanishes (a cleanup, a dissolved channel) is recreated and watched again
// at once, so a sensor never goes deaf for the rest of its life.

import { type FSWatcher, type StatWatcher, existsSync, mkdirSync, statSync, unwatchFile, watch, watchFile } from 'node:fs';
import { dirname } from 'node:path';
import { DIR_MODE } from '../bus/root.js';

export interface DirWatchOptions {
  poll: boolean;
  intervalMs: number;
  /** One entry of `dir` changed (`name` null when the platform does not say which). */
  onEntry(dir: string, name: string | null): void;
  warn(line: string): void;
}

export interface DirWatch {
  /** Watch exactly these directories (created when missing). */
  set(dirs: string[]): void;
  /** A directory removed and recreated between events is a new inode: watch it again. */
  check(): void;
  close(): void;
}

/** How long a vanished directory is left alone before it is made again (see rewatch). */
export const REWATCH_SETTLE_MS = 150;

export function watchDirs(opts: DirWatchOptions): DirWatch {
  const native = new Map<string, FSWatcher>();
  // A directory's identity: inode and birth time. The inode alone is not enough: a directory
  // removed and made again often gets the same inode number back (ext4, tmpfs); the birth
  // time tells them apart where the filesystem records one (0 elsewhere, never the ctime).
  const inodes = new Map<string, string>();
  const inodeOf = (dir: string): string => {
    try {
      const st = statSync(dir, { bigint: true });
      return `${st.ino}:${st.birthtimeNs}`;
    } catch {
      return 'missing';
    }
  };
  const pending = new Map<string, NodeJS.Timeout>();
  const polled = new Map<string, StatWatcher>();
  let closed = false;

  // Created when missing, but never its parents: a directory whose parent is gone belongs
  // to a bus that is being removed, and recreating it would fight the removal.
  const ensure = (dir: string, parents: boolean) => {
    if (existsSync(dir)) return;
    if (parents) mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    else if (existsSync(dirname(dir))) mkdirSync(dir, { mode: DIR_MODE });
  };

  const unwatch = (dir: string) => {
    native.get(dir)?.close();
    native.delete(dir);
    if (polled.has(dir)) unwatchFile(dir);
    polled.delete(dir);
  };

  // Recreated after REWATCH_SETTLE_MS, not in the same instant: an `rm -rf` of the whole bus
  // removes the receive directories before signals/ itself, and a directory made again in
  // between makes that rmdir fail (ENOTEMPTY). By then the parent is gone and nothing is made.
  const rewatch = (dir: string) => {
    if (closed || pending.has(dir)) return;
    unwatch(dir);
    inodes.set(dir, 'gone');
    const t = setTimeout(() => {
      pending.delete(dir);
      if (closed) return;
      try {
        add(dir, false);
        // Anything renamed in while the directory was being recreated: look once.
        opts.onEntry(dir, null);
      } catch {
        // Gone with its parent (the bus is being removed): the tick's check tries again.
        inodes.set(dir, 'gone');
      }
    }, REWATCH_SETTLE_MS);
    t.unref?.();
    pending.set(dir, t);
  };

  const add = (dir: string, parents: boolean) => {
    ensure(dir, parents);
    if (!existsSync(dir)) throw new Error(`${dir} is gone with its parent`);
    inodes.set(dir, inodeOf(dir));
    if (opts.poll) {
      polled.set(
        dir,
        watchFile(dir, { interval: opts.intervalMs, persistent: true }, (cur, prev) => {
          if (cur.nlink === 0 || cur.ino !== prev.ino) return rewatch(dir);
          if (cur.mtimeMs !== prev.mtimeMs) opts.onEntry(dir, null);
        }),
      );
      return;
    }
    const w = watch(dir, { persistent: true }, (_event, name) => {
      // The directory itself went away: its watch is dead from here on.
      if (!existsSync(dir)) return rewatch(dir);
      opts.onEntry(dir, name === null ? null : String(name));
    });
    w.on('error', () => rewatch(dir));
    native.set(dir, w);
  };

  return {
    set(dirs) {
      if (closed) return;
      const want = new Set(dirs);
      for (const dir of [...inodes.keys(), ...polled.keys()]) if (!want.has(dir)) {
        unwatch(dir);
        inodes.delete(dir);
      }
      for (const dir of want) {
        if (native.has(dir) || polled.has(dir)) continue;
        try {
          add(dir, true);
        } catch {
          inodes.set(dir, 'gone'); // the tick's check watches it once it can
        }
      }
    },
    check() {
      for (const [dir, ino] of inodes) if (inodeOf(dir) !== ino) rewatch(dir);
    },
    close() {
      closed = true;
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
      for (const dir of [...native.keys(), ...polled.keys()]) unwatch(dir);
    },
  };
}
