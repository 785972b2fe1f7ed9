// `attend cleanup [--dry-run] [--all] [--older-than <duration> [--force]]`. The rules live in
// bus/upkeep/cleanup.ts (dead projects, empty trays, stale members and state) and
// bus/upkeep/retention.ts (age, and only what every party it was for has been shown, unless a
// person forces it: issue 21 §4).

import type { VerbCtx } from './context.js';
import { type CleanupItem, type CleanupPlan, type KeptItem, type RetentionItem, type Unshown, applyCleanup, planCleanup } from '../bus/upkeep/index.js';
import { refusedError, usageError } from '../wire/errors.js';
import { scopeName } from '../wire/display.js';
import { applyRetention, parseDuration, planRetention } from '../bus/upkeep/index.js';
import { readChannels } from '../bus/channels/index.js';
import { peersEverywhere, readPresence } from '../bus/presence/index.js';
import { attendKey, printable } from '../wire/names.js';
import { livenessOf } from './channels/common.js';

/** A party that old messages were kept for (or, forced, removed without having been shown). */
export interface RetentionHolder {
  id: string;
  messages: number;
  /** Scope labels, in the order first met. */
  scopes: string[];
  why: Unshown['why'][];
}

export interface RetentionSummary {
  olderThan: string;
  /** --force: removed whoever had not been shown them. */
  force: boolean;
  scopes: { scope: string; messages: number; bytes: number }[];
  messages: number;
  bytes: number;
  /** Old enough, but not every party they were for has been shown them: kept. */
  kept: number;
  /** The parties they are kept for (ids, sorted). */
  heldBy: string[];
  /** Per party, what is kept for it (or, with --force, what was removed unshown) and why. */
  holders: RetentionHolder[];
  /** Each message kept, and for whom. */
  keptMessages: { scope: string; id: string; for: Unshown[] }[];
  /** With --force: how many of the removed messages some party had not been shown. */
  forced: number;
}

export interface CleanupResult {
  dryRun: boolean;
  items: CleanupItem[];
  bytes: number;
  retention: RetentionSummary | null;
  notes: string[];
}

/**
 * Who is a person: whoever the roster, a heartbeat, a channel's member list or this process
 * says is one. A person without a delivery ledger reads history in chat and inbox, so retention
 * does not wait for it (bus/upkeep/retention.ts).
 */
function peopleOf(ctx: VerbCtx, root: string): (id: string) => boolean {
  const who = ctx.identity();
  const people = new Set<string>([who.user, ...(who.kind === 'human' ? [who.id] : [])]);
  for (const p of peersEverywhere(root, ctx.live(), ctx.now())) if (p.kind === 'human') people.add(p.id);
  for (const p of readPresence(root)) if (p.kind === 'human') people.add(p.id);
  for (const c of Object.values(readChannels(root).channels)) for (const [id, m] of Object.entries(c.members)) if (m.kind === 'human') people.add(id);
  return (id) => people.has(id);
}

function holdersOf(rows: { scope: string; for: Unshown[] }[]): RetentionHolder[] {
  const by = new Map<string, RetentionHolder>();
  for (const r of rows) {
    for (const u of r.for) {
      const h = by.get(u.id) ?? { id: u.id, messages: 0, scopes: [], why: [] };
      h.messages++;
      if (!h.scopes.includes(r.scope)) h.scopes.push(r.scope);
      if (!h.why.includes(u.why)) h.why.push(u.why);
      by.set(u.id, h);
    }
  }
  return [...by.values()].sort((a, b) => b.messages - a.messages || (a.id < b.id ? -1 : 1));
}

export function runCleanup(ctx: VerbCtx, input: { dryRun?: boolean | undefined; all?: boolean | undefined; olderThan?: string | undefined; force?: boolean | undefined }): CleanupResult {
  let olderThanMs: number | undefined;
  if (input.olderThan !== undefined) {
    const ms = parseDuration(input.olderThan);
    if (ms === null || ms <= 0) throw usageError(`--older-than takes a duration like 90d, 12h, 30m or 2w, not '${printable(input.olderThan)}'`);
    olderThanMs = ms;
  }
  if (input.force && olderThanMs === undefined) throw usageError('--force goes with --older-than: it removes old messages that not every party they were for has been shown');
  // Forcing removes what someone has not been shown: the person's decision (issue 21 §4),
  // never an agent's.
  if (input.force && ctx.identity().kind !== 'human') {
    throw refusedError('only a person may force retention: it removes messages some party has not been shown', 'without --force, cleanup --older-than keeps what is not shown yet');
  }
  const root = ctx.root();
  const now = ctx.now();
  const isAlive = livenessOf(ctx);
  const liveKeys = new Set(ctx.live().map((p) => attendKey(p.origin)));
  const plan: CleanupPlan = planCleanup(root, { projectsDir: ctx.paths.projectsDir, now, all: input.all ?? false, isAlive, liveKeys });
  let retention: RetentionSummary | null = null;
  const ret =
    olderThanMs !== undefined
      ? planRetention(root, { olderThanMs, now, live: new Set(ctx.live().map((p) => p.id)), isAlive, isPerson: peopleOf(ctx, root), force: input.force === true })
      : null;
  if (ret && input.olderThan !== undefined) retention = summarize(input.olderThan, input.force === true, ret.remove, ret.kept);
  if (input.dryRun) return { dryRun: true, items: plan.items, bytes: plan.bytes + (retention?.bytes ?? 0), retention, notes: plan.notes };
  const done = applyCleanup(root, plan, { isAlive, now });
  if (ret && retention) retention = summarize(input.olderThan!, input.force === true, applyRetention(root, ret.remove), ret.kept);
  return { dryRun: false, items: done, bytes: done.reduce((n, i) => n + i.bytes, 0) + (retention?.bytes ?? 0), retention, notes: plan.notes };
}

function summarize(olderThan: string, force: boolean, remove: RetentionItem[], kept: KeptItem[]): RetentionSummary {
  const per = new Map<string, { scope: string; messages: number; bytes: number }>();
  for (const r of remove) {
    const label = scopeName(r.scope);
    const row = per.get(label) ?? { scope: label, messages: 0, bytes: 0 };
    row.messages++;
    row.bytes += r.bytes;
    per.set(label, row);
  }
  const keptMessages = kept.map((k) => ({ scope: scopeName(k.scope), id: k.id, for: k.for }));
  const forced = remove.filter((r) => r.forced !== undefined);
  return {
    olderThan,
    force,
    scopes: [...per.values()],
    messages: remove.length,
    bytes: remove.reduce((n, r) => n + r.bytes, 0),
    kept: kept.length,
    heldBy: [...new Set(kept.flatMap((k) => k.for.map((u) => u.id)))].sort(),
    holders: holdersOf(force ? forced.map((r) => ({ scope: scopeName(r.scope), for: r.forced! })) : keptMessages),
    keptMessages,
    forced: forced.length,
  };
}
