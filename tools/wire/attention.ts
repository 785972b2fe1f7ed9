// Attention (issue 23 §3, spec §5 "Attention"): whether a message wakes a model now or waits
// for its turn boundary. Pure: the message, the reader's focus and the clock come in. The
// streaming conduits (the sensor, the deliverer, the MCP channel push) show only what wakes;
// the rest stays pending for the Stop hook's drain, which shows everything at the boundary.

import type { Urgency } from './envelope.js';

/** A party in focus until `until` (ms), since `since` (ms). */
export interface Focus {
  since: number;
  until: number;
}

/** The longest focus a party may ask for: a focus that outlives a working day is forgotten, not meant. */
export const MAX_FOCUS_MS = 12 * 3600_000;

export function inFocus(focus: Focus | null | undefined, now: number): focus is Focus {
  return focus !== null && focus !== undefined && focus.until > now;
}

/**
 * Does this message wake its reader now? Quiet never does (notices are quiet: presence and
 * status chatter never wakes a model on its own); urgent always does; in focus, only a person
 * does; otherwise everything does.
 */
export function wakesNow(m: { urgency?: Urgency | undefined; fromKind: string }, focus: Focus | null | undefined, now: number): boolean {
  if (m.urgency === 'quiet') return false;
  if (m.urgency === 'urgent') return true;
  return !inFocus(focus, now) || m.fromKind === 'human';
}

/** `14:05`: the hour and minute of `ms` on this machine's clock, as a sender is told it. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** What a sender is told about a recipient in focus that its message will not wake. */
export function focusNote(name: string, focus: Focus): string {
  return `${name} is in focus until ${clockTime(focus.until)}; shown at its next turn boundary`;
}
