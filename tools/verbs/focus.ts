// `focus` (issue 23 §3): a party in focus for a while is woken only by urgent messages and by
// people; the rest waits for its turn boundary (tools/wire/attention.ts), and its senders are
// told so (tools/verbs/delivery.ts applyAttention). A party sets only its own focus.

import { z } from 'zod';
import type { VerbCtx } from './context.js';
import { parseInput } from './input.js';
import { readFocus, writeFocus } from '../bus/presence/index.js';
import { parseDuration } from '../bus/upkeep/index.js';
import { type Focus, MAX_FOCUS_MS } from '../wire/attention.js';
import { usageError } from '../wire/errors.js';

export const focusInput = z.strictObject({
  /** `45m`, `2h`: how long; absent with `off` absent asks what the focus is now. */
  for: z.string().max(16).optional(),
  off: z.boolean().optional(),
});

export interface FocusResult {
  id: string;
  /** The focus now; null when none. */
  focus: Focus | null;
  /** A focus this call ended (`off`, or replaced by a new one). */
  ended: Focus | null;
}

export function runFocus(ctx: VerbCtx, raw: z.input<typeof focusInput>): FocusResult {
  const input = parseInput(focusInput, raw);
  if (input.for !== undefined && input.off === true) throw usageError('give a length of focus or --off, not both');
  const who = ctx.identity();
  const now = ctx.now();
  const root = ctx.root();
  const before = readFocus(root, who.id, now);
  if (input.off === true) {
    writeFocus(root, who.id, null);
    return { id: who.id, focus: null, ended: before };
  }
  if (input.for === undefined) return { id: who.id, focus: before, ended: null };
  const ms = parseDuration(input.for);
  if (ms === null || ms <= 0) throw usageError(`a length of focus is a number and a unit (45m, 2h), not '${input.for}'`);
  if (ms > MAX_FOCUS_MS) throw usageError(`focus lasts at most ${MAX_FOCUS_MS / 3600_000}h`);
  const focus: Focus = { since: now, until: now + ms };
  writeFocus(root, who.id, focus);
  return { id: who.id, focus, ended: before };
}
