// `allow`, `deny` and `grants` (issue 14 §2): the grants and denies of the policy file, and
// reading it back. Only the person who owns the bus changes them (docs/trust.md,
// "Permissions"); a policy file that does not parse is refused, never overwritten.

import { z } from 'zod';
import type { VerbCtx } from '../context.js';
import { parseInput } from '../input.js';
import { resolveTarget } from '../../bus/presence/index.js';
import { allow, deny, nodeArg, policyFile, readPolicy, requireOwner } from '../../bus/trust/index.js';
import { busError } from '../../wire/errors.js';
import type { Policy } from '../../wire/permit.js';

export const grantInput = z.strictObject({
  /** The sender: a live name, path or id, or an id as written. */
  from: z.string().trim().min(1, 'is empty'),
  /** The recipient, or `#channel` / `#open` for posting there. */
  to: z.string().trim().min(1, 'is empty'),
  both: z.boolean().optional(),
  /** Only inside this channel (with or without `#`). */
  channel: z
    .string()
    .transform((c) => c.replace(/^#/, ''))
    .pipe(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'is a channel name: A-Z a-z 0-9 _ . -'))
    .optional(),
});
type GrantInput = z.input<typeof grantInput>;

interface GrantResult {
  /** The ids the arguments resolved to (a live name becomes its id). */
  from: string;
  to: string;
  both: boolean;
  channel: string | null;
  file: string;
  policy: Policy;
}

/** A live name, path or id becomes its id; anything else is taken as an id as written (nodeArg). */
function liveId(ctx: VerbCtx): (t: string) => string | null {
  return (t) => {
    try {
      const found = resolveTarget(t, ctx.live(), { cwd: ctx.cwd, home: ctx.paths.home });
      return found.length === 1 ? found[0]!.id : null;
    } catch {
      return null;
    }
  };
}

function change(ctx: VerbCtx, verb: 'allow' | 'deny', raw: GrantInput): GrantResult {
  const input = parseInput(grantInput, raw);
  const who = ctx.identity();
  // The refusal comes first: an agent is told it may not, not that an id it named is malformed.
  requireOwner(who);
  const from = nodeArg(input.from, liveId(ctx));
  const to = nodeArg(input.to, liveId(ctx));
  const root = ctx.root();
  const policy = (verb === 'allow' ? allow : deny)(root, who, { from, to, both: input.both, channel: input.channel });
  return { from, to, both: input.both === true, channel: input.channel ?? null, file: policyFile(root), policy };
}

/** `allow`: add the grant (both ways with `both`) and lift a matching deny. */
export function runAllow(ctx: VerbCtx, input: GrantInput): GrantResult {
  return change(ctx, 'allow', input);
}

/** `deny`: take a matching grant back and refuse the pair, even inside a group. */
export function runDeny(ctx: VerbCtx, input: GrantInput): GrantResult {
  return change(ctx, 'deny', input);
}

const grantsInput = z.strictObject({});
type GrantsInput = z.input<typeof grantsInput>;

interface GrantsResult {
  file: string;
  /** False while there is no file and the default applies. */
  exists: boolean;
  policy: Policy;
}

/** The policy in force: mode, who posts to #open, grants and denies. A file that does not parse is the bus's error (exit 3), naming the file and line. */
export function runGrants(ctx: VerbCtx, input: GrantsInput = {}): GrantsResult {
  parseInput(grantsInput, input);
  const root = ctx.root();
  const file = policyFile(root);
  const r = readPolicy(root);
  if (!r.ok) throw busError(r.error, `fix or remove ${file}`);
  return { file, exists: r.exists, policy: r.policy };
}
