// Watching the receive directories, not their files (issue #12 §1). chokidar keeps one
// inotify watch per file it has seen, so a sensor's watches, memory and wake-up cost grew
// with the history (100,000 messages: ~100,000 watches, a good part of the user's limit).
// A directory watch sees every entry renamed into it: one inotify watch per directory,
// whatever the history. Polling (`--poll`, or when native events never arrive) stats each
// directory instead, whose mtime changes when an entry is added.
//
// A directory that vanishes (a cleanup, a dissolved channel) is recreated and watched again
// at the next check (the sensor's 2 s tick), so a sensor never goes deaf for the rest of its
// life; a writer that recreates it first is noticed the same way (a new inode).

import { type FSWatcher, type StatWatcher, existsSync, mkdirSync, statSync, unwatchFile, watch, watchFile } from 'node:fs';
import { basename, dirname } from 'node:path';
import { DIR_MODE } from '../bus/store/index.js';

interface DirWatchOptions {
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

export function watchDirs(opts: DirWatchOptions): DirWatch {
  const native = new Map<string, FSWatcher>();
  // A directory's identity: inode and birth time. The inode alone is not enough: a directory
  // removed and made again often gets the same inode number back (ext4, tmpfs), so a
  // replacement nobody saw go would pass for the watched one; the birth time tells them apart
  // where the filesystem records one (0 elsewhere, never the changing ctime).
  const inodes = new Map<string, string>();
  const inodeOf = (dir: string): string => {
    try {
      const st = statSync(dir, { bigint: true });
      return `${st.ino}:${st.birthtimeNs}`;
    } catch {
      return 'missing';
    }
  };
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

  const gone = (dir: string) => {
    unwatch(dir);
    inodes.set(dir, 'gone');
  };

  const rewatch = (dir: string) => {
    if (closed) return;
    unwatch(dir);
    try {
      add(dir, false);
      // Anything renamed in while the directory was being recreated: look once.
      opts.onEntry(dir, null);
    } catch {
      // Gone with its parent (the bus is being removed): the tick's check tries again.
      inodes.set(dir, 'gone');
    }
  };

  const add = (dir: string, parents: boolean) => {
    ensure(dir, parents);
    if (!existsSync(dir)) throw new Error(`${dir} is gone with its parent`);
    inodes.set(dir, inodeOf(dir));
    if (opts.poll) {
      polled.set(
        dir,
        watchFile(dir, { interval: opts.intervalMs, persistent: true }, (cur, prev) => {
          if (cur.nlink === 0 || cur.ino !== prev.ino) return gone(dir);
          if (cur.mtimeMs !== prev.mtimeMs) opts.onEntry(dir, null);
        }),
      );
      return;
    }
    const self = basename(dir);
    const w = watch(dir, { persistent: true }, (event, name) => {
      // The directory itself went away: its watch is dead from here on. It is recreated on
      // the next check (the sensor's tick), not here: a bus being removed as a whole must
      // not have a directory put back into it while `rm -rf` is still walking it. The event
      // for that names the directory itself (or nothing); only then is it looked at, not on
      // every entry (a broadcast wakes every sensor on the bus).
      if (event === 'rename' && (name === null || String(name) === self) && !existsSync(dir)) return gone(dir);
      opts.onEntry(dir, name === null ? null : String(name));
    });
    w.on('error', () => gone(dir));
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
      for (const dir of [...native.keys(), ...polled.keys()]) unwatch(dir);
    },
  };
}
