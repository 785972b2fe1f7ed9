// Where a draft goes, as pure state (issue 9 item 4): the tab's default, which message a
// plain draft replies to, what /reply answers, and the destination line above the compose
// box. The line and Enter read the same plan, so what the line says is what Enter does.

import { lookupTarget } from '../../bus/presence/index.js';
import { addressees } from '../../wire/envelope.js';
import { neutralize } from '../../wire/render.js';
import { type ChatMessage, type FeedState, isDirect, newestFromOthers, selectedMessage } from './feed.js';
import { type DefaultDest, describeDest, parseAddress, type PeerRef, type Reach, reachNote, resolveRoute, type RouteResult, type RouteSources, unreachableReason } from './routing.js';

/** Where a draft that names nobody goes: decided by the active tab. */
export function defaultDestination(feed: Pick<FeedState, 'active' | 'messages' | 'me'>, book: RouteSources['book']): DefaultDest {
  if (feed.active === 'merged' || feed.active === '#open') return { kind: 'open' };
  if (feed.active.startsWith('#')) return { kind: 'channel', channel: feed.active.slice(1) };
  // The direct tab: the last direct correspondent, live or not (its message waits for it),
  // as long as the address book knows them by that id.
  for (let i = feed.messages.length - 1; i >= 0; i--) {
    const m = feed.messages[i];
    if (!m || !isDirect(m, feed.me)) continue;
    const other = m.fromId === feed.me ? addressees(m.to)[0] : m.fromId;
    const r = other === undefined ? null : lookupTarget(other, book.peers, book.opts);
    const p: PeerRef | undefined = r?.ok && r.peers.length === 1 && r.peers[0]?.id === other ? r.peers[0] : undefined;
    if (p) return { kind: 'direct', to: [p] };
    break;
  }
  return { kind: 'none', reason: 'in the direct tab, start with @Name to pick a recipient' };
}

export type DraftPlan =
  /** A slash command other than /reply. */
  | { kind: 'command'; name: string }
  /** `/reply text`: answers the selection, else the newest message from someone else here. */
  | { kind: 'replyCommand'; target: ChatMessage | undefined }
  /** A plain draft with a message selected: a reply to it. */
  | { kind: 'reply'; to: ChatMessage; urgent?: true }
  /**
   * A message: where it goes (or why it cannot), why it is refused though it resolves, and
   * who will not see it now (it is sent all the same).
   */
  | { kind: 'send'; route: RouteResult; refusal: string | null; note: string | null; urgent?: true };

/** `/urgent <draft>` (issue 23 §3): the draft after it goes where it says, marked urgent. */
const URGENT = /^\/urgent(\s+|$)/i;

interface PlanInputs {
  text: string;
  feed: FeedState;
  sources: RouteSources;
  defaultDest: DefaultDest;
  reach: Reach;
}

export function planDraft({ text, feed, sources, defaultDest, reach }: PlanInputs): DraftPlan {
  const trimmed = text.trimStart();
  const urgent = URGENT.exec(trimmed);
  if (urgent) {
    const plan = planDraft({ text: trimmed.slice(urgent[0].length), feed, sources, defaultDest, reach });
    return plan.kind === 'send' || plan.kind === 'reply' ? { ...plan, urgent: true } : plan;
  }
  if (trimmed.startsWith('/')) {
    if (/^\/reply(\s|$)/i.test(trimmed)) return { kind: 'replyCommand', target: selectedMessage(feed) ?? newestFromOthers(feed) };
    return { kind: 'command', name: text.trim().split(/\s+/)[0] ?? '' };
  }
  // With a message selected, a plain draft is a reply to it; a draft that starts with an
  // address (@Name, #channel) still goes where it says.
  const selected = selectedMessage(feed);
  if (selected && parseAddress(text).tokens.length === 0) return { kind: 'reply', to: selected };
  const route = resolveRoute(text, sources, defaultDest);
  if (!route.ok) return { kind: 'send', route, refusal: null, note: null };
  return { kind: 'send', route, refusal: unreachableReason(route.dest, reach), note: reachNote(route.dest, reach, sources.me) };
}

/** The message a plan answers, if it is a reply of either kind. */
export function replyTarget(plan: DraftPlan): ChatMessage | undefined {
  return plan.kind === 'reply' ? plan.to : plan.kind === 'replyCommand' ? plan.target : undefined;
}

/**
 * Whom a reply to `m` reaches, as the chat names them: its sender, or, for one's own message,
 * the people it was for (tools/verbs/reply.ts threads a follow-up to them, never to oneself).
 */
export function replyAudience(m: ChatMessage, me: string, nameOf: (id: string) => string): string {
  if (m.fromId !== me) return neutralize(nameOf(m.fromId));
  if (m.to === '*') return '#open';
  if (m.to.startsWith('#')) return neutralize(m.to);
  return addressees(m.to).map((id) => neutralize(nameOf(id))).join(', ');
}

/** The destination line's text, and whether it warns (the draft would not go). */
export function destinationLine(plan: DraftPlan, nameOf: (id: string) => string, me: string): { text: string; bad: boolean } {
  switch (plan.kind) {
    case 'reply':
      return { text: `${plan.urgent ? 'URGENT ' : ''}reply to ${replyAudience(plan.to, me, nameOf)} (${plan.to.id})`, bad: false };
    case 'replyCommand':
      return plan.target
        ? { text: `/reply: reply to ${replyAudience(plan.target, me, nameOf)} (${plan.target.id})`, bad: false }
        : { text: '/reply: nothing to reply to in this tab', bad: false };
    case 'command':
      return { text: `command ${plan.name}`, bad: false };
    case 'send': {
      const r = plan.route;
      if (!r.ok) return { text: `✗ ${r.reason}`, bad: true };
      if (plan.refusal) return { text: `to ${describeDest(r.dest)} — ${plan.refusal}`, bad: true };
      return { text: `${plan.urgent ? 'URGENT ' : ''}to ${describeDest(r.dest)}${plan.note ? ` — ${plan.note}` : ''}`, bad: false };
    }
  }
}
