// The Stop-hook drain (docs/architecture.md, "Delivery"): at the turn boundary, deliver what the sensor has not,
// party-aware, through the same ledger. The writer is injected so the output is written
// inside the ledger's lock, once the wake is recorded in flight, and confirmed after (issue
// 21 §6: a record that cannot be written, a full disk, writes nothing).

import type { Identity } from '../identity/resolve.js';
import { noteShown, takePending } from '../bus/delivery/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import { resolveParents } from '../bus/delivery/index.js';
import type { Reporter } from '../bus/store/index.js';
import { planDrain, renderDrain } from '../wire/party.js';
import type { NameLookup } from '../wire/display.js';
import { againCount, shouldTeach, wakeNotes } from '../wire/wake.js';

/** Blocks in a row before the drain lets the session stop (a re-entry ceiling, so a session can always stop). */
export const DRAIN_ROUND_CEILING = 5;
/** Claude Code caps hook output at 10,000 characters (docs/integration.md). */
const HOOK_OUTPUT_MAX = 10_000;

export type DrainFormat = 'hook' | 'plain';

interface StopPayload {
  sessionId?: string;
  stopHookActive: boolean;
}

/** Parse the Stop hook's stdin. Anything that is not a JSON object reads as a first round. */
export function parseStopPayload(text: string): { payload: StopPayload; warning?: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { payload: { stopHookActive: false } };
  try {
    const o = JSON.parse(trimmed) as unknown;
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error('not an object');
    const r = o as Record<string, unknown>;
    const payload: StopPayload = { stopHookActive: r.stop_hook_active === true };
    if (typeof r.session_id === 'string') payload.sessionId = r.session_id;
    return { payload };
  } catch {
    return { payload: { stopHookActive: false }, warning: 'attend: the Stop hook payload on stdin is not JSON; treating this as a first round' };
  }
}

export interface DrainDeps {
  root: string;
  now(): number;
  reporter: Reporter;
  names(me: string): NameLookup;
  write(text: string): void;
  warn(line: string): void;
  trace?: ((line: string) => void) | undefined;
}

export interface DrainOutcome {
  /** What was written; null when nothing was pending or the ceiling was reached. */
  output: string | null;
  reason: 'delivered' | 'nothing-pending' | 'ceiling';
  shown: string[];
  collapsed: string[];
  overflow: string[];
}

/**
 * Hook output: `hookSpecificOutput.additionalContext` rather than `decision: block`. Both
 * continue the turn, but the model reads a block's reason as `Stop hook blocking error
 * from command: ...` — an error to fix — while additional context arrives as a
 * `<system-reminder>` it reads as information (docs/integration.md). Peer messages are
 * information; some of them need no answer at all.
 *
 * Claude Code accepts `additionalContext` from a Stop hook only from 2.1.163 on; an older
 * one rejects the output and the messages would be consumed unseen. The plugin declares
 * `engines["claude-code"] >=2.1.163`, but versions before 2.1.323 ignore that field, so when
 * the session record names an older version the drain falls back to `decision: block`, which
 * every version understands (issue #11 §8).
 */
function formatHookOutput(text: string, claudeVersion?: string): string {
  if (claudeVersion !== undefined && olderThan(claudeVersion, STOP_CONTEXT_SINCE)) return JSON.stringify({ decision: 'block', reason: text });
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'Stop', additionalContext: text } });
}

/** The first Claude Code version that takes `additionalContext` from a Stop hook. */
const STOP_CONTEXT_SINCE = '2.1.163';

/** `a < b` for dotted numeric versions; anything unreadable counts as new (the default shape). */
export function olderThan(a: string, b: string): boolean {
  const pa = /^(\d+)\.(\d+)\.(\d+)/.exec(a);
  const pb = /^(\d+)\.(\d+)\.(\d+)/.exec(b);
  if (!pa || !pb) return false;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d < 0;
  }
  return false;
}

export function drainOnce(deps: DrainDeps, who: Identity, payload: StopPayload, format: DrainFormat): DrainOutcome {
  // Signatures are verified for what the drain presents (the messages it shows in full and
  // the senders a collapsed line names), not for the remainder it only counts: a drain of a
  // thousand new messages shows ten (issue 14, "Performance").
  return takePending(deps.root, who, { now: deps.now(), reporter: deps.reporter, warn: deps.warn, verify: 'presented', conduit: 'Stop hook' }, (p) => {
    const ledger = p.ledger;
    if (!payload.stopHookActive) ledger.drainRounds = 0;
    const none: DrainOutcome = { output: null, reason: 'nothing-pending', shown: [], collapsed: [], overflow: [] };
    if (ledger.drainRounds >= DRAIN_ROUND_CEILING) {
      // Leave everything pending: the sensor or the next turn delivers it.
      deps.warn(`attend: ${ledger.drainRounds} Stop-hook rounds in a row; letting the session stop`);
      return { consume: [], result: { ...none, reason: 'ceiling' } };
    }
    const notes = wakeNotes({ hidden: p.hidden, invited: p.invited, again: againCount(p.fresh.map((m) => m.id), p.again) });
    const check = p.check ?? (() => null);
    let fresh = p.fresh;
    if (fresh.length === 0 && notes.length === 0) return { consume: [], result: none };

    const known = resolveParents(deps.root, receiveScopes(deps.root, who), fresh, deps.reporter);
    const now = deps.now();
    const names = deps.names(who.id);
    const render = () => {
      const teach = shouldTeach({ fresh, taught: ledger.taught });
      const items = planDrain(fresh, who.id, known);
      let budget = HOOK_OUTPUT_MAX - 1_000;
      let r = renderDrain(items, names, now, { budget, notes, teach });
      let text = format === 'hook' ? formatHookOutput(r.text, who.record?.version) : r.text;
      // JSON escaping grows the text; shrink the budget until the hook output fits.
      while (text.length >= HOOK_OUTPUT_MAX && budget > 1_000) {
        budget -= 1_000;
        r = renderDrain(items, names, now, { budget, notes, teach });
        text = format === 'hook' ? formatHookOutput(r.text, who.record?.version) : r.text;
      }
      return { r, text };
    };
    let { r: rendered, text: output } = render();
    // What would be presented must pass the whole gate; a message that fails it (a bad
    // signature) is left out and the rest is planned again. It is still consumed below, as
    // every held message is: `attend inbox --held` shows it to the owner.
    for (;;) {
      const presented = new Set([...rendered.shown, ...rendered.collapsed]);
      const held = new Set(fresh.filter((m) => presented.has(m.id) && check(m) !== null).map((m) => m.id));
      if (held.size === 0) break;
      fresh = fresh.filter((m) => !held.has(m.id));
      if (fresh.length === 0 && notes.length === 0) return { consume: p.fresh.map((m) => m.id), result: none };
      ({ r: rendered, text: output } = render());
    }
    if (fresh.length > 0) ledger.taught = true;
    ledger.drainRounds += 1;
    const shownMsgs = fresh.filter((m) => rendered.shown.includes(m.id) && m.fromId !== who.id);
    const newest = shownMsgs[shownMsgs.length - 1];
    if (newest) noteShown(ledger, newest);
    deps.trace?.(`attend: trace drain shown=${rendered.shown.join(',')} collapsed=${rendered.collapsed.join(',')} overflow=${rendered.overflow.join(',')}`);
    // Collapsed threads and the "+N more" remainder are consumed too: they were announced,
    // and `attend inbox` still lists them. Otherwise the next round would block again.
    // Written once takePending has recorded the wake in flight (issue 21 §6).
    const text = output;
    return {
      consume: p.fresh.map((m) => m.id),
      result: { output, reason: 'delivered', shown: rendered.shown, collapsed: rendered.collapsed, overflow: rendered.overflow },
      emit: () => {
        deps.write(text);
      },
    };
  });
}
