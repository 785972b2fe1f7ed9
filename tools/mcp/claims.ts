// `claim`, `release`, `claims` (issue 23 §2): file claims from MCP. Three tools in one file,
// against "one file per tool", because they share the claim's schema and nothing else uses it.

import { z } from 'zod';
import { checkInput, claimInput, releaseInput, runCheck, runClaim, runClaims, runRelease } from '../verbs/claims.js';
import { READ_ONLY, defineTool } from './tool.js';

const claimOut = z.object({
  pattern: z.string().describe('the path or glob, from the root of the work tree it was claimed in'),
  project: z.string().describe('the repository (git:<root commit>): every worktree and clone of it is one project'),
  worktree: z.string(),
  holder: z.object({ id: z.string(), kind: z.enum(['agent', 'human']), name: z.string().describe('`send` accepts it in `to`'), pid: z.number().optional(), procStart: z.string().optional() }),
  reason: z.string().nullable(),
  at: z.number(),
  expires: z.number(),
  mine: z.boolean(),
});

export const claimTool = defineTool({
  name: 'claim',
  title: 'Claim files',
  description:
    'Claim files, directories or globs (relative to the working directory, or absolute) for a while, before editing files others may be editing: another session about to edit them is told who holds them, why and how to ask. Advisory. A claim ends at its ttl (default 1h), on `release`, or when this session ends. Fails (nothing claimed) when another live party holds any of them, naming who.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  input: claimInput.extend({ paths: claimInput.shape.paths.describe('files, directories or globs'), ttl: claimInput.shape.ttl.describe('30m, 2h, 1d; default 1h') }),
  output: z.object({ claims: z.array(claimOut) }),
  run: (ctx, args) => runClaim(ctx, args),
});

export const releaseTool = defineTool({
  name: 'release',
  title: 'Release claims',
  description: 'Release this session’s claims on these paths (as claimed), or all of its claims when none are named.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: releaseInput,
  output: z.object({ released: z.array(claimOut) }),
  run: (ctx, args) => runRelease(ctx, args),
});

export const claimsTool = defineTool({
  name: 'claims',
  title: 'List or check claims',
  description: 'List the file claims that hold now (whose, on what, why, until when); with `check`, only whether another live party holds that file (`held`) and who.',
  hints: READ_ONLY,
  input: z.strictObject({ check: checkInput.shape.path.optional().describe('a file to check') }),
  output: z.object({ claims: z.array(claimOut), held: z.boolean().optional() }),
  run: (ctx, args) => {
    if (args.check === undefined) return runClaims(ctx);
    const me = ctx.identity().id;
    const r = runCheck(ctx, { path: args.check });
    return { held: r.claims.length > 0, claims: r.claims.map((c) => ({ ...c, reason: c.reason ?? null, mine: c.holder.id === me })) };
  },
});
