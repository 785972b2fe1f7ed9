// What a reader pays for held messages (issue 20, must-have 5, attack 9): a file is verified
// once (its held verdict is kept with the directory's listing cache, tools/bus/store/
// verdicts.ts, under the stamp of the trust inputs, tools/bus/trust/stamp.ts), and a reader
// verifies at most VERIFY_CAP files it has no verdict for per pass; the rest are *unchecked*:
// never shown, not consumed, counted, and verified by a later pass. A listing walked newest
// first records what it found held as runs (a stretch of the listing that is all held), which
// later listings step over without parsing its entries. So 20,000 hand-written held lines
// cost a reader about what none do, once seen, and a flood never seen costs one pass at most
// VERIFY_CAP verifications.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Scope } from '../../wire/envelope.js';
import { scopeDir, scopeDirName } from '../store/layout.js';
import { type Key, compareKeys } from '../store/listing-entry.js';
import { type Message, SIGNAL_EXT } from '../store/messages.js';
import { type HeldRun, type Verdicts, keyOf, openVerdicts } from '../store/verdicts.js';
import { keyDirectoryOf, trustDirOf } from './anchors.js';
import type { Gate } from './gate.js';
import { trustStamp } from './stamp.js';

/** Files without a verdict one pass verifies at most (each costs a read and a check, ~0.5 ms). */
export const VERIFY_CAP = 200;

export type { HeldRun };

/** The verdict for a message a pass did not verify: not shown, not consumed. */
export const UNCHECKED = Symbol('unchecked');

export interface HeldCheck {
  /**
   * Before reading `id` in `scope`: its kept held verdict (skip it without reading),
   * UNCHECKED once this pass has verified VERIFY_CAP files (skip it, not consumed), or null:
   * read it and ask `held`. A file with a signature beside it (`signed`, known from a
   * listing) is not held back by the cap: a reader that verifies only what it presents (the
   * drain) reads it, and the cap is what an unverifiable flood cannot get past. A file in
   * the range of a kept run (or of one of `covered`, runs a listing found out of date) that
   * has not changed since the run was found is held by it.
   */
  admit(scope: Scope, id: string, opts?: { signed?: boolean; covered?: readonly HeldRun[] }): string | typeof UNCHECKED | null;
  /** The gate's answer for an admitted message; a signature verdict is kept. */
  held(m: Message, policyOnly?: boolean): string | null;
  /** Messages this pass left unchecked. */
  readonly unchecked: number;
  /** Held messages skipped by their kept verdict. */
  readonly skipped: number;
  /** The kept run of `scope`'s listing whose range holds `key` (a listing steps over it). */
  runAt(scope: Scope, key: Key): HeldRun | undefined;
  /** Record a run a listing walk found (every entry in it held), or drop one that no longer holds. */
  addRun(scope: Scope, run: HeldRun): void;
  dropRun(scope: Scope, run: HeldRun): void;
  /** A kept run was counted in the listing's base file `base`, which holds `n` of it. */
  countedIn(scope: Scope, run: HeldRun, base: string, n: number): void;
  /** Keep the verdicts found. */
  save(): void;
}

export function createHeldCheck(root: string, gate: Gate, cap = VERIFY_CAP): HeldCheck {
  const dirs = new Map<string, Verdicts>();
  let stamp: string | undefined;
  const of = (scope: Scope) => {
    const name = scopeDirName(scope);
    let v = dirs.get(name);
    if (!v) {
      const keysDir = keyDirectoryOf(root);
      stamp ??= trustStamp(root, keysDir === undefined ? undefined : trustDirOf(keysDir));
      dirs.set(name, (v = openVerdicts(root, name, stamp)));
    }
    return v;
  };
  // A run covers an id the listing held when the run was found: a file changed since (a late
  // arrival with an older id, a file rewritten) is not covered, and is verified on its own.
  const fromRun = (scope: Scope, id: string, stale: readonly HeldRun[] = []): string | undefined => {
    const v = of(scope);
    const key = v.runs.length > 0 || stale.length > 0 ? keyOf(id) : null;
    const run = key ? (v.runAt(key) ?? stale.find((r) => compareKeys(r.first, key) <= 0 && compareKeys(key, r.last) <= 0)) : undefined;
    if (!run) return undefined;
    const st = statSync(join(scopeDir(root, scope), `${id}${SIGNAL_EXT}`), { throwIfNoEntry: false });
    return st !== undefined && st.ctimeMs < run.at ? run.reason : undefined;
  };
  let spent = 0;
  let unchecked = 0;
  let skipped = 0;
  return {
    admit(scope, id, opts = {}) {
      const kept = of(scope).get(id) ?? fromRun(scope, id, opts.covered);
      if (kept !== undefined) {
        skipped++;
        return kept;
      }
      if (opts.signed === true) return null;
      if (spent >= cap) {
        unchecked++;
        return UNCHECKED;
      }
      spent++;
      return null;
    },
    held(m, policyOnly = false) {
      const policy = gate.heldByPolicy(m);
      if (policy !== null || policyOnly) return policy;
      const reason = gate.held(m);
      // Only the signature's verdict is the file's own; a policy one changes with a grant.
      if (reason !== null && m.sig === 'bad') of(m.scope).set(m.id, reason);
      return reason;
    },
    get unchecked() {
      return unchecked;
    },
    get skipped() {
      return skipped;
    },
    runAt: (scope, key) => of(scope).runAt(key),
    addRun: (scope, run) => of(scope).addRun(run),
    dropRun: (scope, run) => of(scope).dropRun(run),
    countedIn: (scope, run, base, n) => of(scope).countedIn(run, base, n),
    save() {
      for (const v of dirs.values()) v.save();
    },
  };
}
