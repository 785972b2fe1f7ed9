// Delivery logic both conduits share: who is party to a message, thread grouping, digest
// counting and the observation-line format (docs/architecture.md, "Delivery"). Pure:
// messages, names and the clock come in as arguments.

import type { ResolvedEnvelope, Scope } from './envelope.js';
import { type NameLookup, addresseeLabel, partyLabel, scopeName } from './display.js';
import { chunkText, defuseMarkup, formatAge, messageHeader, messageLead, neutralize, quoteBody } from './render.js';
import { isAddressedTo, isFromOrTo } from './visibility.js';

/** The fields of a message delivery needs; `Message` in tools/bus/store/messages.ts satisfies it. */
export interface DeliveryMessage extends ResolvedEnvelope {
  id: string;
  scope: Scope;
  time: number;
  /** The reader's signature check (issue 14), shown in the header as `sig=`. */
  sig?: 'ok' | 'none' | 'bad' | undefined;
  /** Signed by a new identity of the sender (a lost key replaced, issue 20): shown as `key=new`. */
  newKeySince?: number | undefined;
  /** Whether `on_behalf_of` is covered by a signed delegation (issue 14 §5). */
  obo?: 'verified' | 'claimed' | undefined;
}

/** More than this many messages in one wake become one digest line (docs/architecture.md, "Delivery"). */
export const DIGEST_THRESHOLD = 8;
const CHUNK_SIZE = 260;
const MAX_CHUNKS = 3;
/** The drain's render cap, applied after party ordering. */
const DRAIN_RENDER_MAX = 10;

/**
 * The Monitor lines for one message: the bracketed header, then `message from <sender>
 * (<kind>, to <addressee>): <body>`, the body cut into at most three chunks of 260
 * characters. Continuation chunks start with `… (2/3) ` so no chunk can begin a line that
 * reads as an `[attend ...]` header.
 */
export function formatObservation(m: DeliveryMessage, names: NameLookup): string[] {
  // One line already (newlines folded); tag-like markup defused as in the drain (issue #10).
  const body = defuseMarkup(neutralize(m.body));
  const { chunks, truncated } = chunkText(body, CHUNK_SIZE, MAX_CHUNKS);
  const lead = `${messageLead(m)} ${neutralize(partyLabel(m.fromId, names))} (${m.fromKind}, to ${neutralize(addresseeLabel(m, names))}): `;
  const lines = [messageHeader(m, m.id), lead + (chunks[0] ?? '')];
  for (let i = 1; i < chunks.length; i++) lines.push(`… (${i + 1}/${chunks.length}) ${chunks[i]}`);
  if (truncated) lines[lines.length - 1] += ` … (cut; attend inbox ${m.id})`;
  return lines;
}

export interface DigestCounts {
  count: number;
  toYou: number;
  open: number;
  other: number;
  human: number;
  agent: number;
}

/** Partition by addressee, so a shared tray never counts a sibling's mail as ours. */
export function countDigest(msgs: DeliveryMessage[], me: string): DigestCounts {
  const c: DigestCounts = { count: msgs.length, toYou: 0, open: 0, other: 0, human: 0, agent: 0 };
  for (const m of msgs) {
    if (m.to === '*') c.open++;
    else if (isAddressedTo(m, me)) c.toYou++;
    else c.other++;
    if (m.fromKind === 'human') c.human++;
    else c.agent++;
  }
  return c;
}

export function formatDigest(c: DigestCounts): string {
  return `[attend digest count=${c.count} to_you=${c.toYou} open=${c.open} other=${c.other} human=${c.human} agent=${c.agent}]`;
}

/** What a session that has never seen a message is told once, beside its first one. */
export const TEACH_LINE = '[attend] answer with: attend reply "<text>" (threads to the newest message shown); attend inbox lists everything';

/** `A`, `A and B`, `A, B and C`. */
function joinNames(names: string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

// ---------------------------------------------------------------- party and threads

type PartyState = 'party' | 'not-party' | 'unknown';

const MAX_CHAIN = 64;

/**
 * A session is party to a message when its id is in `to`, when it sent it, when the
 * message is channel traffic (party by membership), or when it replies through the `re`
 * chain to one it is party to. A legacy tray line ("this tray") is addressed to the tray,
 * so to us. An unresolvable `re` makes the message party-unknown, which renders in full
 * (collapsing is reserved for threads whose every link resolved).
 */
export function partyOf(m: DeliveryMessage, me: string, byId: ReadonlyMap<string, DeliveryMessage>): PartyState {
  let cur: DeliveryMessage | undefined = m;
  const seen = new Set<string>();
  for (let hop = 0; cur && hop < MAX_CHAIN; hop++) {
    if (isFromOrTo(cur, me) || cur.to.startsWith('#')) return 'party';
    if (cur.re === undefined) return 'not-party';
    if (seen.has(cur.id)) return 'not-party';
    seen.add(cur.id);
    cur = byId.get(cur.re);
  }
  return 'unknown';
}

/** The id of the oldest ancestor reachable through `re` (the message itself when it has none). */
export function threadRoot(m: DeliveryMessage, byId: ReadonlyMap<string, DeliveryMessage>): string {
  let cur = m;
  const seen = new Set<string>([m.id]);
  while (cur.re !== undefined) {
    const parent = byId.get(cur.re);
    if (!parent || seen.has(parent.id)) return cur.re;
    seen.add(parent.id);
    cur = parent;
  }
  return cur.id;
}

type DrainItem =
  | { kind: 'message'; message: DeliveryMessage }
  | { kind: 'thread'; root: string; messages: DeliveryMessage[] };

/**
 * Order what the drain shows: party (and party-unknown) and urgent messages first (urgent
 * ones ahead, then oldest first), then
 * each non-party thread as one item, ordered by its newest message. The render cap is
 * applied by the caller to this list, so party messages are never the ones cut.
 */
export function planDrain(fresh: DeliveryMessage[], me: string, known: ReadonlyMap<string, DeliveryMessage>): DrainItem[] {
  const byId = new Map(known);
  for (const m of fresh) byId.set(m.id, m);
  const full: DeliveryMessage[] = [];
  const threads = new Map<string, DeliveryMessage[]>();
  for (const m of fresh) {
    // An urgent message is never collapsed into someone else's thread (issue 23 §3).
    if (m.urgency === 'urgent' || partyOf(m, me, byId) !== 'not-party') full.push(m);
    else {
      const root = threadRoot(m, byId);
      const list = threads.get(root) ?? [];
      list.push(m);
      threads.set(root, list);
    }
  }
  const byTime = (a: DeliveryMessage, b: DeliveryMessage) => a.time - b.time || (a.id < b.id ? -1 : 1);
  // Urgent first, so the render cap never pushes one into "+N more".
  const urgent = (m: DeliveryMessage) => (m.urgency === 'urgent' ? 0 : 1);
  full.sort((a, b) => urgent(a) - urgent(b) || byTime(a, b));
  const items: DrainItem[] = full.map((message) => ({ kind: 'message', message }));
  const groups = [...threads.entries()].map(([root, messages]) => ({ root, messages: messages.sort(byTime) }));
  groups.sort((a, b) => byTime(a.messages[a.messages.length - 1]!, b.messages[b.messages.length - 1]!));
  // A thread of one message is still a thread: the collapse is what keeps someone else's
  // conversation on #open from filling this session's context.
  for (const g of groups) items.push({ kind: 'thread', root: g.root, messages: g.messages });
  return items;
}

/** `[3 messages, Hana-beta and Tam, #open, 2d to 4h ago]`. */
export function formatCollapsed(msgs: DeliveryMessage[], names: NameLookup, now: number): string {
  const senders: string[] = [];
  for (const m of msgs) {
    const s = neutralize(partyLabel(m.fromId, names));
    if (!senders.includes(s)) senders.push(s);
  }
  const scopes: string[] = [];
  for (const m of msgs) {
    const s = neutralize(scopeName(m.scope));
    if (!scopes.includes(s)) scopes.push(s);
  }
  const oldest = Math.min(...msgs.map((m) => m.time));
  const newest = Math.max(...msgs.map((m) => m.time));
  const a = formatAge(now - oldest);
  const b = formatAge(now - newest);
  const age = a === b ? `${a} ago` : `${a} to ${b} ago`;
  const count = `${msgs.length} message${msgs.length === 1 ? '' : 's'}`;
  const shownSenders = senders.length > 4 ? [...senders.slice(0, 3), `${senders.length - 3} others`] : senders;
  return `[${count}, ${joinNames(shownSenders)}, ${scopes.join(', ')}, ${age}]`;
}

const DRAIN_BODY_MAX = 1500;

/** One message in full for the drain: the header, then `message from …`, then the body indented. */
export function formatDrainMessage(m: DeliveryMessage, names: NameLookup, now: number): string[] {
  const lines = [messageHeader(m, m.id), `${messageLead(m)} ${neutralize(partyLabel(m.fromId, names))} (${m.fromKind}, to ${neutralize(addresseeLabel(m, names))}, ${neutralize(scopeName(m.scope))}, ${formatAge(now - m.time)} ago):`];
  let body = m.body;
  const cps = Array.from(body);
  if (cps.length > DRAIN_BODY_MAX) body = `${cps.slice(0, DRAIN_BODY_MAX).join('')} … (cut; attend inbox ${m.id})`;
  // Quoted line by line so nothing inside a body can pass for a header or markup (issue #10 item 5).
  lines.push(...quoteBody(body));
  return lines;
}

const DRAIN_CLOSING = 'Silence is a valid reply: answer only if it helps (attend reply "<text>" threads to the newest message above).';

interface DrainRender {
  text: string;
  /** Ids rendered in full, and ids covered by a collapsed line or the "+N more" remainder. */
  shown: string[];
  collapsed: string[];
  overflow: string[];
}

/**
 * Render the drain within `budget` characters: items in plan order up to the render cap,
 * the rest summed into "+N more — attend inbox". An item that would break the budget goes
 * to the remainder too (the hook output cap is 10,000 characters).
 */
export function renderDrain(
  items: DrainItem[],
  names: NameLookup,
  now: number,
  opts: { budget: number; cap?: number; notes?: string[]; teach?: boolean },
): DrainRender {
  const cap = opts.cap ?? DRAIN_RENDER_MAX;
  const total = items.reduce((n, it) => n + (it.kind === 'message' ? 1 : it.messages.length), 0);
  const head = `[attend] ${total} peer message${total === 1 ? '' : 's'} delivered at the turn boundary`;
  const tail = [...(opts.teach ? [TEACH_LINE] : []), DRAIN_CLOSING];
  const notes = opts.notes ?? [];
  const out: string[] = [head, ...notes];
  const shown: string[] = [];
  const collapsed: string[] = [];
  const overflow: string[] = [];
  // Leave room for the remainder line and the closing lines.
  const reserve = tail.join('\n').length + 64;
  let used = out.join('\n').length + reserve;
  let rendered = 0;
  for (const it of items) {
    const ids = it.kind === 'message' ? [it.message.id] : it.messages.map((m) => m.id);
    if (rendered >= cap) {
      overflow.push(...ids);
      continue;
    }
    const lines = it.kind === 'message' ? formatDrainMessage(it.message, names, now) : [formatCollapsed(it.messages, names, now)];
    const size = lines.join('\n').length + 1;
    if (used + size > opts.budget) {
      overflow.push(...ids);
      continue;
    }
    out.push(...lines);
    used += size;
    rendered++;
    if (it.kind === 'message') shown.push(...ids);
    else collapsed.push(...ids);
  }
  if (overflow.length > 0) out.push(`+${overflow.length} more — attend inbox`);
  out.push(...tail);
  return { text: out.join('\n'), shown, collapsed, overflow };
}
