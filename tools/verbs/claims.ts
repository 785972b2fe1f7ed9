// `attend claim`, `attend release`, `attend claims` (issue 23 §2): advisory claims on files,
// keyed by repository and path (tools/bus/claims/), holding while unexpired and while their
// holder is live. A claim on what another live party holds is refused, exit 7, naming them.

import { z } from 'zod';
import type { VerbCtx } from './context.js';
import { parseInput } from './input.js';
import { type Claim, type ClaimHolder, holderAlive, isGlob, keyOf, liveClaims, overlaps, readClaims, removeClaim, writeClaim } from '../bus/claims/index.js';
import { parseDuration } from '../bus/upkeep/index.js';
import { AttendError, EXIT, usageError } from '../wire/errors.js';
import { checkFiles, type FileHolders, describeHolder } from './claims-check.js';

/** A claim nobody renews ends after an hour: long enough for a change, short enough to forget safely. */
export const DEFAULT_CLAIM_TTL = '1h';
const MAX_TTL_MS = 7 * 86_400_000;

const ttl = z
  .string()
  .refine((t) => {
    const ms = parseDuration(t);
    return ms !== null && ms > 0 && ms <= MAX_TTL_MS;
  }, 'a duration from 1s to 7d, like 30m, 2h or 1d')
  .optional();

export const claimInput = z.strictObject({
  paths: z.array(z.string().min(1, 'an empty path')).min(1, 'name at least one path or glob'),
  ttl,
  reason: z.string().max(500, 'at most 500 characters').optional(),
});

export const releaseInput = z.strictObject({ paths: z.array(z.string().min(1, 'an empty path')).optional() });

export const checkInput = z.strictObject({ path: z.string().min(1, 'an empty path') });

export interface ClaimView {
  pattern: string;
  project: string;
  worktree: string;
  holder: ClaimHolder;
  reason: string | null;
  at: number;
  expires: number;
  mine: boolean;
}

function view(c: Claim, me: string): ClaimView {
  return { pattern: c.pattern, project: c.project, worktree: c.worktree, holder: c.holder, reason: c.reason ?? null, at: c.at, expires: c.expires, mine: c.holder.id === me };
}

/** Who this context is, as a claim names it: its live process when it has one, so the claim ends with it. */
function holderOf(ctx: VerbCtx): ClaimHolder {
  const who = ctx.identity();
  const name = ctx.live().find((p) => p.id === who.id)?.name ?? (who.kind === 'human' ? who.id : (who.record?.name ?? who.id));
  const h: ClaimHolder = { id: who.id, kind: who.kind, name };
  if (who.kind === 'agent' && who.pid !== undefined) {
    h.pid = who.pid;
    const start = who.record?.procStart ?? ctx.procInfo(who.pid)?.start;
    if (start !== undefined) h.procStart = String(start);
  }
  return h;
}

/** A path or glob as a claim stores it: its project, and the pattern from the work tree root. */
function patternOf(ctx: VerbCtx, arg: string): { project: string; worktree: string; pattern: string } {
  if (arg.includes('\0')) throw usageError('a path with a NUL byte');
  if (!isGlob(arg)) {
    const k = keyOf(ctx.root(), arg, ctx.cwd);
    return { project: k.project, worktree: k.worktree, pattern: k.rel };
  }
  // The glob's leading plain directories locate the project; the rest stays a glob under them.
  const parts = arg.split('/');
  const first = parts.findIndex((p) => isGlob(p));
  const base = parts.slice(0, first).join('/') || (arg.startsWith('/') ? '/' : '.');
  const k = keyOf(ctx.root(), base, ctx.cwd);
  const rest = parts.slice(first).join('/');
  return { project: k.project, worktree: k.worktree, pattern: k.rel ? `${k.rel}/${rest}` : rest };
}

/** Remove claim files that no longer hold (expired, or their holder is gone): upkeep any claim or release does. */
function prune(ctx: VerbCtx): void {
  const now = ctx.now();
  for (const c of readClaims(ctx.root())) if (c.expires <= now || !holderAlive(ctx.root(), c.holder, now)) removeClaim(ctx.root(), c);
}

export function runClaim(ctx: VerbCtx, raw: z.input<typeof claimInput>): { claims: ClaimView[] } {
  const input = parseInput(claimInput, raw);
  const me = holderOf(ctx);
  const now = ctx.now();
  const ms = parseDuration(input.ttl ?? DEFAULT_CLAIM_TTL) as number;
  const wanted = input.paths.map((p) => patternOf(ctx, p));
  prune(ctx);
  const others = liveClaims(ctx.root(), now).filter((c) => c.holder.id !== me.id);
  const conflicts = wanted.flatMap((w) => others.filter((c) => c.project === w.project && overlaps(c.pattern, w.pattern)));
  if (conflicts.length > 0) {
    // Nothing is claimed when any of it is held: a half-made claim is worse than none.
    const first = conflicts[0] as Claim;
    throw new AttendError(`${describeHolder(first, now)}${conflicts.length > 1 ? ` (and ${conflicts.length - 1} more)` : ''}; nothing was claimed`, EXIT.held, `ask them: attend send --to ${JSON.stringify(first.holder.name)} "…"`);
  }
  const made = wanted.map((w): Claim => ({ v: 1, ...w, holder: me, ...(input.reason ? { reason: input.reason } : {}), at: now, expires: now + ms }));
  for (const c of made) writeClaim(ctx.root(), c);
  return { claims: made.map((c) => view(c, me.id)) };
}

/** Release the named claims of this party, or all of them. */
export function runRelease(ctx: VerbCtx, raw: z.input<typeof releaseInput>): { released: ClaimView[] } {
  const input = parseInput(releaseInput, raw);
  const me = ctx.identity().id;
  const named = input.paths?.map((p) => patternOf(ctx, p));
  const mine = readClaims(ctx.root()).filter((c) => c.holder.id === me && (named === undefined || named.some((n) => n.project === c.project && n.pattern === c.pattern)));
  for (const c of mine) removeClaim(ctx.root(), c);
  prune(ctx);
  return { released: mine.map((c) => view(c, me)) };
}

/** Every claim that holds now, on this bus: whose, on what, why, until when. */
export function runClaims(ctx: VerbCtx): { claims: ClaimView[] } {
  const me = ctx.identity().id;
  return { claims: liveClaims(ctx.root(), ctx.now()).sort((a, b) => a.at - b.at).map((c) => view(c, me)) };
}

/** Who other than this party holds `path` (an agent CLI without hooks asks this before it edits). */
export function runCheck(ctx: VerbCtx, raw: z.input<typeof checkInput>): FileHolders {
  const input = parseInput(checkInput, raw);
  return checkFiles(ctx.root(), [input.path], { cwd: ctx.cwd, me: ctx.identity().id, now: ctx.now() })[0] as FileHolders;
}
