// `delegate` (issue 14 §5): the person signs "this session may speak on my behalf", so a
// message it writes with `on_behalf_of:<person>` reads (verified) while the delegation covers
// it (docs/trust.md, "Delegations").

import { z } from 'zod';
import type { VerbCtx } from '../context.js';
import { parseInput } from '../input.js';
import { resolveTarget } from '../../bus/presence/index.js';
import { type SignedDelegation, delegate, parseScope, parseTtl, requirePrincipal } from '../../bus/trust/index.js';
import { printable } from '../../wire/names.js';
import { usageError } from '../../wire/errors.js';

export const delegateInput = z.strictObject({
  /** The session: a live name, path or session id. */
  session: z.string().trim().min(1, 'is empty'),
  /** How long it holds: `30m`, `2h`, `1d` (at most 30 days). */
  ttl: z.string().default('2h'),
  /** Where it holds: `*`, `#channel` (or a bare channel name) or an absolute path. */
  scopes: z.array(z.string()).default(['*']),
});
type DelegateInput = z.input<typeof delegateInput>;

/** The signed delegation as stored under `<bus>/delegations/<person>/<session>.json`. */
export function runDelegate(ctx: VerbCtx, raw: DelegateInput): SignedDelegation {
  const input = parseInput(delegateInput, raw);
  const who = ctx.identity();
  requirePrincipal(who);
  const ttlMs = parseTtl(input.ttl);
  const scopes = (input.scopes.length > 0 ? input.scopes : ['*']).map(parseScope);
  const found = resolveTarget(input.session, ctx.live(), { cwd: ctx.cwd, home: ctx.paths.home });
  if (found.length !== 1) throw usageError(`'${printable(input.session, 40)}' names ${found.length} sessions; use a session id`);
  return delegate({ root: ctx.root(), keysDir: ctx.paths.keysDir, principal: who, delegate: found[0]!.id, scopes, now: ctx.now(), ttlMs });
}
