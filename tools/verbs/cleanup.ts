// `attend cleanup [--dry-run] [--all] [--older-than <duration>]`. The rules live in
// bus/upkeep/cleanup.ts (dead projects, empty trays, stale members and state) and
// bus/upkeep/retention.ts (age, never past what a live reader has not been shown).

import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { VerbCtx } from './context.js';
import { type CleanupItem, type CleanupPlan, applyCleanup, planCleanup } from '../bus/upkeep/index.js';
import { usageError } from '../wire/errors.js';
import { scopeDir } from '../bus/store/index.js';
import { scopeName } from '../wire/display.js';
import { compactIndex, parseDuration, planRetention } from '../bus/upkeep/index.js';
import { SIGNAL_EXT } from '../bus/store/index.js';
import { attendKey, printable } from '../wire/names.js';
import { livenessOf } from './channels/common.js';

export interface RetentionSummary {
  olderThan: string;
  scopes: { scope: string; messages: number; bytes: number }[];
  messages: number;
  bytes: number;
  /** Old enough, but a live reader has not been shown them yet: kept. */
  kept: number;
  heldBy: string[];
}

export interface CleanupResult {
  dryRun: boolean;
  items: CleanupItem[];
  bytes: number;
  retention: RetentionSummary | null;
  notes: string[];
}

export function runCleanup(ctx: VerbCtx, input: { dryRun?: boolean | undefined; all?: boolean | undefined; olderThan?: string | undefined }): CleanupResult {
  let olderThanMs: number | undefined;
  if (input.olderThan !== undefined) {
    const ms = parseDuration(input.olderThan);
    if (ms === null || ms <= 0) throw usageError(`--older-than takes a duration like 90d, 12h, 30m or 2w, not '${printable(input.olderThan)}'`);
    olderThanMs = ms;
  }
  const root = ctx.root();
  const now = ctx.now();
  const isAlive = livenessOf(ctx);
  const liveKeys = new Set(ctx.live().map((p) => attendKey(p.origin)));
  const plan: CleanupPlan = planCleanup(root, { projectsDir: ctx.paths.projectsDir, now, all: input.all ?? false, isAlive, liveKeys });
  let retention: RetentionSummary | null = null;
  const ret = olderThanMs !== undefined ? planRetention(root, { olderThanMs, now, live: ctx.live() }) : null;
  if (ret && input.olderThan !== undefined) {
    const per = new Map<string, { scope: string; messages: number; bytes: number }>();
    for (const r of ret.remove) {
      const label = scopeName(r.scope);
      const row = per.get(label) ?? { scope: label, messages: 0, bytes: 0 };
      row.messages++;
      row.bytes += r.bytes;
      per.set(label, row);
    }
    retention = {
      olderThan: input.olderThan,
      scopes: [...per.values()],
      messages: ret.remove.length,
      bytes: ret.remove.reduce((n, r) => n + r.bytes, 0),
      kept: ret.kept,
      heldBy: ret.heldBy,
    };
  }
  if (input.dryRun) return { dryRun: true, items: plan.items, bytes: plan.bytes + (retention?.bytes ?? 0), retention, notes: plan.notes };
  const done = applyCleanup(root, plan, { isAlive, now });
  if (ret && retention) {
    const touched = new Set<string>();
    let removed = 0;
    for (const r of ret.remove) {
      const dir = scopeDir(root, r.scope);
      try {
        unlinkSync(join(dir, `${r.id}${SIGNAL_EXT}`));
        removed++;
        touched.add(dir);
      } catch {
        // gone meanwhile
      }
    }
    for (const dir of touched) compactIndex(dir);
    retention.messages = removed;
  }
  return { dryRun: false, items: done, bytes: done.reduce((n, i) => n + i.bytes, 0) + (retention?.bytes ?? 0), retention, notes: plan.notes };
}
