// A wake-up on change, for a reader that waits (issue 23 §1, `attend ask`; the adapters, the
// web server's roster): one inotify watch per directory (dir-watch.ts), never one per file,
// and no timer. A directory that does not exist yet is waited for through its nearest
// existing ancestor (a tray nobody has written to, a ledger no conduit has made), so it is
// watched from the moment it is made. The callback is coalesced to once per turn of the
// event loop: a burst of renames is one look.

import { DirWatch } from './dir-watch.js';

export interface Wake {
  close(): void;
}

/** Call `onChange` after anything changes in one of `dirs` (or one of them comes to be). */
export function wakeOnChange(dirs: string[], onChange: () => void): Wake {
  let closed = false;
  let queued = false;
  // Until the watches hold still: a directory made between a failed watch and its ancestor's
  // (mkdir -p of a ledger and its session's directory, in one breath) would give the
  // ancestor's watch no event, and what is then written in it none at all.
  const settle = (w: DirWatch) => {
    for (let round = 0; round < 8; round++) {
      const before = w.watched;
      w.ensure();
      if (w.watched === before) return;
    }
  };
  const fire = () => {
    if (queued || closed) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      if (closed) return;
      for (const w of watches) settle(w);
      onChange();
    });
  };
  const watches = [...new Set(dirs)].map((d) => new DirWatch(d, fire, true));
  for (const w of watches) settle(w);
  return {
    close() {
      closed = true;
      for (const w of watches) w.close();
    },
  };
}
