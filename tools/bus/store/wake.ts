// A wake-up on change, for a reader that waits (issue 23 §1, `attend ask`): one inotify watch
// per directory (as the sensor's dir-watch.ts, issue #12 §1), never one per file, and no
// timer. A directory that does not exist yet is waited for through its nearest existing
// ancestor (a tray nobody has written to, a ledger no conduit has made): an event there
// re-arms the watches, so the directory is watched from the moment it is made. The callback
// is coalesced to once per turn of the event loop: a burst of renames is one look.

import { type FSWatcher, existsSync, watch } from 'node:fs';
import { dirname } from 'node:path';

export interface Wake {
  close(): void;
}

/** Call `onChange` after anything changes in one of `dirs` (or one of them comes to be). */
export function wakeOnChange(dirs: string[], onChange: () => void): Wake {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  let queued = false;
  const fire = () => {
    if (queued || closed) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      if (closed) return;
      arm();
      onChange();
    });
  };
  // The directory itself when it exists, else its nearest existing ancestor.
  const target = (dir: string): string | null => {
    for (let d = dir; ; d = dirname(d)) {
      if (existsSync(d)) return d;
      if (dirname(d) === d) return null;
    }
  };
  // Until the targets hold still: a directory made between its existence check and the
  // watch on its parent (mkdir -p of a ledger and its session's directory, in one breath)
  // would give the parent's watch no event, and what is then written in it none at all.
  const arm = () => {
    for (let round = 0; round < 8; round++) {
      const want = armOnce();
      if (dirs.every((d) => want.has(target(d) ?? ''))) return;
    }
  };
  const armOnce = (): Set<string> => {
    const want = new Set(dirs.map(target).filter((d): d is string => d !== null));
    for (const [d, w] of watchers) if (!want.has(d) || !existsSync(d)) {
      w.close();
      watchers.delete(d);
    }
    for (const d of want) {
      if (watchers.has(d)) continue;
      try {
        const w = watch(d, { persistent: true }, fire);
        // A watch whose directory went away is dead: look again (and re-arm) at once.
        w.on('error', () => {
          w.close();
          watchers.delete(d);
          fire();
        });
        watchers.set(d, w);
      } catch {
        // Gone between the check and the watch: the parent's event re-arms it.
      }
    }
    return want;
  };
  arm();
  return {
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
