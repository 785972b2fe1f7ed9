// What a reader pays for held messages (issue 20, must-have 5, attack 9): a file is verified
// once (its held verdict is kept with the directory's listing cache, tools/bus/store/
// verdicts.ts), and a reader verifies at most VERIFY_CAP files it has no verdict for per pass;
// the rest are *unchecked*: never shown, not consumed, counted, and verified by a later pass.
// So 20,000 hand-written held lines cost a reader about what none do, once seen, and a flood
// never seen costs one pass at most VERIFY_CAP verifications.

import type { Scope } from '../../wire/envelope.js';
import { scopeDirName } from '../store/layout.js';
import type { Message } from '../store/messages.js';
import { type Verdicts, openVerdicts } from '../store/verdicts.js';
import type { Gate } from './gate.js';

/** Files without a verdict one pass verifies at most (each costs a read and a check, ~0.5 ms). */
export const VERIFY_CAP = 200;

/** The verdict for a message a pass did not verify: not shown, not consumed. */
export const UNCHECKED = Symbol('unchecked');

export interface HeldCheck {
  /**
   * Before reading `id` in `scope`: its kept held verdict (skip it without reading),
   * UNCHECKED once this pass has verified VERIFY_CAP files (skip it, not consumed), or null:
   * read it and ask `held`. A file with a signature beside it (`signed`, known from a
   * listing) is not held back by the cap: a reader that verifies only what it presents (the
   * drain) reads it, and the cap is what an unverifiable flood cannot get past.
   */
  admit(scope: Scope, id: string, opts?: { signed?: boolean }): string | typeof UNCHECKED | null;
  /** The gate's answer for an admitted message; a signature verdict is kept. */
  held(m: Message, policyOnly?: boolean): string | null;
  /** Messages this pass left unchecked. */
  readonly unchecked: number;
  /** Held messages skipped by their kept verdict. */
  readonly skipped: number;
  /** Keep the verdicts found. */
  save(): void;
}

export function createHeldCheck(root: string, gate: Gate, cap = VERIFY_CAP): HeldCheck {
  const dirs = new Map<string, Verdicts>();
  const of = (scope: Scope) => {
    const name = scopeDirName(scope);
    let v = dirs.get(name);
    if (!v) dirs.set(name, (v = openVerdicts(root, name)));
    return v;
  };
  let spent = 0;
  let unchecked = 0;
  let skipped = 0;
  return {
    admit(scope, id, opts = {}) {
      const kept = of(scope).get(id);
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
    save() {
      for (const v of dirs.values()) v.save();
    },
  };
}
