// `attend cleanup [--dry-run] [--all]` (issue #3 §8). The rules live in bus/cleanup.ts.

import type { VerbCtx } from './context.js';
import { type CleanupItem, type CleanupPlan, applyCleanup, planCleanup } from '../bus/cleanup.js';
import { attendKey } from '../wire/names.js';
import { livenessOf } from './channels/common.js';

export interface CleanupResult {
  dryRun: boolean;
  items: CleanupItem[];
  bytes: number;
  notes: string[];
}

export function runCleanup(ctx: VerbCtx, input: { dryRun?: boolean | undefined; all?: boolean | undefined }): CleanupResult {
  const root = ctx.root();
  const now = ctx.now();
  const isAlive = livenessOf(ctx);
  const liveKeys = new Set(ctx.live().map((p) => attendKey(p.origin)));
  const plan: CleanupPlan = planCleanup(root, { projectsDir: ctx.paths.projectsDir, now, all: input.all ?? false, isAlive, liveKeys });
  if (input.dryRun) return { dryRun: true, items: plan.items, bytes: plan.bytes, notes: plan.notes };
  const done = applyCleanup(root, plan, { isAlive, now });
  return { dryRun: false, items: done, bytes: done.reduce((n, i) => n + i.bytes, 0), notes: plan.notes };
}
