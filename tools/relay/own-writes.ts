// What this relay's importer has just written, so that its own outbound loop is not woken by
// it: an imported message is never published (the loop guard, tools/relay/store.ts
// ImportedSet), and on a machine that receives, a scan for every import was most of the
// relay's work on the path to the sensor, which the same rename wakes at the same moment.
//
// A rename is the importer's when its id is recorded as imported (before the rename). An
// index event is the importer's when the index is still the file and the size the importer's
// last lines left it at: a local writer's line after them makes it longer, and wakes the loop.
// A local line just before the importer's, its event merged with theirs, is still seen: its
// message's rename is not an import, and wakes the loop (wake.ts, LINE_GRACE_MS at most).

import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { INDEX_NAME, type IndexEnd, SIGNAL_EXT } from '../bus/store/index.js';
import { SIG_EXT } from '../bus/trust/index.js';
import type { ImportedSet } from './store.js';

export class OwnWrites {
  /** Per directory (its path): the index as the importer's last lines left it. */
  private readonly ends = new Map<string, IndexEnd>();

  constructor(private readonly imported: Pick<ImportedSet, 'has'>) {}

  /** The importer appended its lines to `dir`'s index (null: someone else appended meanwhile). */
  indexed(dir: string, end: IndexEnd | null): void {
    if (end) this.ends.set(dir, end);
    else this.ends.delete(dir);
  }

  /** Whether the event for `name` in `dir` (a path under signals/) is the importer's own. */
  isOwn(dir: string, name: string): boolean {
    if (name === INDEX_NAME) {
      const end = this.ends.get(dir);
      if (!end) return false;
      const st = statSync(join(dir, INDEX_NAME), { throwIfNoEntry: false });
      return st !== undefined && st.ino === end.ino && st.size === end.size;
    }
    const id = name.endsWith(SIGNAL_EXT) ? name.slice(0, -SIGNAL_EXT.length) : name.endsWith(SIG_EXT) ? name.slice(0, -SIG_EXT.length) : null;
    return id !== null && this.imported.has(basename(dir), id);
  }
}
