// What Enter does with the draft, as the destination line previewed it (state/destination.ts
// planDraft): run a slash command (slash.ts), reply to the selection, or send. The outcome
// goes to the feed and compose reducers and the status line through the sinks the App hands
// over; nothing here holds state.

import type { ChatActions } from './actions.js';
import { errorLine } from './hints.js';
import { runSlash } from './slash.js';
import type { ComposeAction } from './state/compose.js';
import { type DraftPlan, replyAudience, replyTarget } from './state/destination.js';
import type { FeedAction, FeedState } from './state/feed.js';
import { describeDest } from './state/routing.js';

export interface Status {
  text: string;
  level: 'info' | 'error';
}

interface SubmitDeps {
  text: string;
  plan: DraftPlan;
  feed: Pick<FeedState, 'active' | 'channels' | 'me'>;
  actions: ChatActions;
  /** The one name rule (tools/wire/display.ts). */
  name(id: string): string;
  now(): number;
  mouse: boolean;
  dispatch(a: FeedAction): void;
  cdispatch(a: ComposeAction): void;
  setStatus(s: Status | null): void;
  setMouse(on: boolean): void;
  refreshRoster(): void;
  /** An `/ask` was sent: pending until its answer settles (App keeps the list for the status line). */
  asked(a: { id: string; name: string; answer: Promise<unknown> }): void;
  /** Ends every pending wait (the chat is closing). */
  waits?: AbortSignal;
  quit(): void;
}

export function submitDraft(d: SubmitDeps): void {
  const { text, plan, feed, actions, dispatch, cdispatch, setStatus } = d;
  if (text.trim().length === 0) return;
  if (plan.kind === 'command' || plan.kind === 'replyCommand') {
    const out = runSlash(text, {
      actions,
      ...(d.waits ? { waits: d.waits } : {}),
      tabChannel: feed.active.startsWith('#') && feed.active !== '#open' ? feed.active.slice(1) : null,
      replyTarget: () => {
        const m = replyTarget(plan);
        return m ? { id: m.id, sender: replyAudience(m, feed.me, d.name) } : undefined;
      },
    });
    if (out.switchTo) {
      const target = out.switchTo;
      dispatch({ type: 'channels', names: [...feed.channels, ...(target.startsWith('#') ? [target.slice(1)] : [])] });
      dispatch({ type: 'switch', tab: target });
    }
    // After the switch, so the result shows in the tab the operator lands in.
    for (const l of out.lines) dispatch({ type: 'notice', text: l.text, level: l.level, time: d.now() });
    if (out.clear) dispatch({ type: 'clear', time: d.now() });
    if (out.toggleMouse) {
      d.setMouse(!d.mouse);
      setStatus({ text: `mouse wheel scrolling ${d.mouse ? 'off' : 'on'}`, level: 'info' });
    }
    if (out.channelsChanged) d.refreshRoster();
    if (out.replied) dispatch({ type: 'unselect' });
    if (out.asked) d.asked(out.asked);
    if (out.consumed) {
      cdispatch({ type: 'submitted' });
      if (!out.toggleMouse) setStatus(null);
    } else setStatus({ text: out.lines[0]?.text ?? 'command failed', level: 'error' });
    if (out.quit) d.quit();
    return;
  }
  if (plan.kind === 'reply') {
    const parent = plan.to;
    try {
      const r = plan.urgent ? actions.reply(parent.id, text.trimStart().replace(/^\/urgent\s*/i, ''), 'urgent') : actions.reply(parent.id, text);
      cdispatch({ type: 'submitted' });
      dispatch({ type: 'unselect' });
      setStatus({ text: `replied to ${replyAudience(parent, feed.me, d.name)} (${r.id})${r.notes.length ? ` — ${r.notes.join('; ')}` : ''}`, level: 'info' });
    } catch (err) {
      setStatus({ text: `not sent: ${errorLine(err)}`, level: 'error' });
    }
    return;
  }
  const route = plan.route;
  if (!route.ok) return setStatus({ text: `not sent: ${route.reason}`, level: 'error' });
  if (route.body.trim().length === 0) return setStatus({ text: 'not sent: the message is empty', level: 'error' });
  if (plan.refusal) return setStatus({ text: `not sent: ${plan.refusal}`, level: 'error' });
  try {
    const r = actions.send(route.dest, route.body, plan.urgent ? 'urgent' : undefined);
    cdispatch({ type: 'submitted' });
    // Who will not see it now, as the send verb found it at send time (the same words as the
    // CLI and MCP); the destination line showed the roster's preview before Enter. The id
    // last: on a narrow terminal the truncated end is the least needed part.
    setStatus({ text: `sent to ${describeDest(route.dest)}${r.notes.length ? ` — ${r.notes.join('; ')}` : ''} (${r.id})`, level: 'info' });
  } catch (err) {
    setStatus({ text: `not sent: ${errorLine(err)}`, level: 'error' });
    d.refreshRoster();
  }
}
