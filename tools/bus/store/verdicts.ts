// Held verdicts (issue 20, must-have 5 "held messages cost O(1) to a reader"): per scope
// directory, the ids a reader found held by their signature, kept beside the directory's
// listing cache (tools/bus/store/listing-cache.ts) and trusted as it is — by id, for the file
// as it was listed:
//
//   <root>/cache/listing/<scope dir>/held.json   {"v":1,"held":{"<id>":"<reason>",...}}
//
// So a file is verified once: every later reader (inbox, drain, sensor, chat) skips it
// without opening it. Only held verdicts are kept (a genuine message is read to be shown
// anyway), and only signature verdicts (a policy verdict changes with a grant). Derived data,
// like the listing: deleted with it (cleanup, dissolve), and one that does not parse is empty.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { listingCacheDir } from './listing-cache.js';
import { ensureDir } from './root.js';

const FILE = 'held.json';

export interface Verdicts {
  get(id: string): string | undefined;
  set(id: string, reason: string): void;
  /** How many held verdicts the directory has. */
  readonly size: number;
  /** Write what was added. Never throws: a cache is optional. */
  save(): void;
}

export function openVerdicts(root: string, dirName: string): Verdicts {
  const cdir = listingCacheDir(root, dirName);
  const held = new Map<string, string>();
  try {
    const o = JSON.parse(readFileSync(join(cdir, FILE), 'utf8')) as { v?: unknown; held?: unknown };
    if (o.v === 1 && typeof o.held === 'object' && o.held !== null) for (const [id, r] of Object.entries(o.held)) if (typeof r === 'string') held.set(id, r);
  } catch {
    // none yet, or not ours to trust: start empty
  }
  let dirty = false;
  return {
    get: (id) => held.get(id),
    set(id, reason) {
      if (held.get(id) === reason) return;
      held.set(id, reason);
      dirty = true;
    },
    get size() {
      return held.size;
    },
    save() {
      if (!dirty) return;
      try {
        ensureDir(cdir);
        writeFileAtomic(join(cdir, FILE), JSON.stringify({ v: 1, held: Object.fromEntries(held) }));
        dirty = false;
      } catch {
        // Not written: the next reader verifies these again.
      }
    },
  };
}
