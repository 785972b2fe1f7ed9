// Held verdicts (issue 20, must-have 5 "held messages cost O(1) to a reader"): per scope
// directory, what readers found held by its signature, kept beside the directory's listing
// cache (tools/bus/store/listing-cache.ts) under the stamp of the trust inputs that decided it
// (tools/bus/trust/stamp.ts):
//
//   <root>/cache/listing/<scope dir>/held.json
//     {"v":2,"stamp":"…","held":{"<id>":"<reason>",…},"runs":[[first,last,n,at,"<reason>"],…]}
//
// `held`: single ids. `runs`: a summary of a stretch of the listing in which every entry is
// held — its oldest and newest id, how many entries it holds, and when it was found (ms) —
// so a flood of 20,000 held lines is one run, which a listing steps over (its count checked
// against the listing's) and a reader reads in one small file instead of a record per file.
// Ids a run covers are dropped from `held`. Only signature verdicts are kept (a genuine
// message is read to be shown anyway; a policy verdict is the reader's own). Derived data,
// like the listing: deleted with it (cleanup, dissolve); one that does not parse, or was kept
// under another stamp, is empty.

import { join } from 'node:path';
import { idTime } from '../../wire/ids.js';
import { readTextIfAny, writeFileAtomic } from './atomic.js';
import { listingCacheDir } from './listing-cache.js';
import { type Key, compareKeys } from './listing-entry.js';
import { ensureDir } from './root.js';

const FILE = 'held.json';
const VERSION = 2;

/** A stretch of a listing in which every entry is held. */
export interface HeldRun {
  /** Oldest and newest entry (ids that carry their own time: a run never holds another). */
  first: Key;
  last: Key;
  /** Entries the listing held between them, both included, when the run was found. */
  n: number;
  /** When it was found (ms): a file changed since is not covered (it came later). */
  at: number;
  reason: string;
  /**
   * The listing cache's base file it was last counted in, and how many of its entries that
   * base holds: a base never changes, so the next check counts only what came after it.
   */
  base?: [string, number];
}

export interface Verdicts {
  /** A single verdict (runs are asked with runAt). */
  get(id: string): string | undefined;
  set(id: string, reason: string): void;
  /** The runs, oldest first. */
  readonly runs: readonly HeldRun[];
  /** The run whose range holds `key`, if any. */
  runAt(key: Key): HeldRun | undefined;
  /** Add a run; runs it contains and the single verdicts it covers are dropped. */
  addRun(run: HeldRun): void;
  /** A run that no longer describes the listing (its count differs): dropped. */
  dropRun(run: HeldRun): void;
  /** A kept run was counted in `base`, which holds `n` of its entries. */
  countedIn(run: HeldRun, base: string, n: number): void;
  /** How many held verdicts the directory has (single ones and the runs' entries). */
  readonly size: number;
  /** Write what was added. Never throws: a cache is optional. */
  save(): void;
}

type RunRow = [string, string, number, number, string] | [string, string, number, number, string, string, number];

/** An id's place in a listing when it carries its own time (every id attend makes does). */
export function keyOf(id: string): Key | null {
  const time = idTime(id);
  return time === null ? null : { time, id };
}

function parseRun(r: unknown): HeldRun | null {
  if (!Array.isArray(r) || (r.length !== 5 && r.length !== 7)) return null;
  const [a, b, n, at, reason, base, inBase] = r as [unknown, unknown, unknown, unknown, unknown, unknown, unknown];
  const first = typeof a === 'string' ? keyOf(a) : null;
  const last = typeof b === 'string' ? keyOf(b) : null;
  if (!first || !last || compareKeys(first, last) > 0 || !Number.isSafeInteger(n) || (n as number) < 1 || typeof at !== 'number' || typeof reason !== 'string') return null;
  const run: HeldRun = { first, last, n: n as number, at, reason };
  if (typeof base === 'string' && Number.isSafeInteger(inBase) && (inBase as number) >= 0) run.base = [base, inBase as number];
  return run;
}

export function openVerdicts(root: string, dirName: string, stamp: string): Verdicts {
  const cdir = listingCacheDir(root, dirName);
  const held = new Map<string, string>();
  let runs: HeldRun[] = [];
  try {
    // Read on every delivery cycle, and absent until something was held: no throw for that.
    const text = readTextIfAny(join(cdir, FILE));
    const o = (text === null ? {} : JSON.parse(text)) as { v?: unknown; stamp?: unknown; held?: unknown; runs?: unknown };
    // Kept under other trust inputs (a key appeared or rotated, the policy changed): decided again.
    if (o.v === VERSION && o.stamp === stamp) {
      if (typeof o.held === 'object' && o.held !== null) for (const [id, r] of Object.entries(o.held)) if (typeof r === 'string') held.set(id, r);
      if (Array.isArray(o.runs)) for (const r of o.runs) {
        const run = parseRun(r);
        if (run) runs.push(run);
      }
      runs.sort((x, y) => compareKeys(x.first, y.first));
    }
  } catch {
    // none yet, or not ours to trust: start empty
  }
  let dirty = false;
  const runAt = (key: Key) => runs.find((r) => compareKeys(r.first, key) <= 0 && compareKeys(key, r.last) <= 0);
  return {
    get: (id) => held.get(id),
    set(id, reason) {
      if (held.get(id) === reason) return;
      held.set(id, reason);
      dirty = true;
    },
    get runs() {
      return runs;
    },
    runAt,
    addRun(run) {
      // A walk that stepped over a run and found nothing more records it again: nothing new.
      if (runs.some((r) => r.n === run.n && compareKeys(r.first, run.first) === 0 && compareKeys(r.last, run.last) === 0)) return;
      const inside = (k: Key) => compareKeys(run.first, k) <= 0 && compareKeys(k, run.last) <= 0;
      runs = [...runs.filter((r) => !(inside(r.first) && inside(r.last))), run].sort((x, y) => compareKeys(x.first, y.first));
      for (const id of [...held.keys()]) {
        const k = keyOf(id);
        if (k && inside(k)) held.delete(id);
      }
      dirty = true;
    },
    dropRun(run) {
      runs = runs.filter((r) => r !== run);
      dirty = true;
    },
    countedIn(run, base, n) {
      if (run.base?.[0] === base && run.base[1] === n) return;
      run.base = [base, n];
      dirty = true;
    },
    get size() {
      return held.size + runs.reduce((s, r) => s + r.n, 0);
    },
    save() {
      if (!dirty) return;
      try {
        ensureDir(cdir);
        const rows: RunRow[] = runs.map((r) => (r.base ? [r.first.id, r.last.id, r.n, r.at, r.reason, r.base[0], r.base[1]] : [r.first.id, r.last.id, r.n, r.at, r.reason]));
        writeFileAtomic(join(cdir, FILE), JSON.stringify({ v: VERSION, stamp, held: Object.fromEntries(held), runs: rows }));
        dirty = false;
      } catch {
        // Not written: the next reader verifies these again.
      }
    },
  };
}
