// One delivery wake, planned once for every conduit (issue #9 §2): the sensor's Monitor
// lines, the MCP channel push and the Stop-hook drain share the notes for hidden and
// invited messages, the teaching line and — for the two streaming conduits — the digest
// rule. Pure: the pending messages, their known parents and the ledger's `taught` come in.
//
// The digest (docs/architecture.md, "Delivery": more than DIGEST_THRESHOLD messages in one wake) folds only what is
// not personal: a message addressed to this session, sent by it, or replying into a thread
// it is in is always shown in full (issue #10 §4), at most STREAM_FULL_MAX per wake; the
// personal messages past that stay pending for the next wake instead of being counted away.

import { isFromOrTo } from './visibility.js';
import { type DeliveryMessage, type DigestCounts, DIGEST_THRESHOLD, TEACH_LINE, countDigest, formatDigest, formatObservation } from './party.js';
import type { NameLookup } from './display.js';
import { type Focus, wakesNow } from './attention.js';

/** Personal messages shown in full in one streaming wake; the rest wait for the next. */
export const STREAM_FULL_MAX = 8;

interface InvitedNote {
  channel: string;
  count: number;
  older: number;
}

interface WakeInput {
  /** Pending, oldest first. */
  fresh: DeliveryMessage[];
  hidden: number;
  invited: InvitedNote[];
  /** The ledger says the session was taught to answer with `attend reply`. */
  taught: boolean;
  me: string;
  /** Parents of the fresh messages (for the `re` chain), by id. */
  known?: ReadonlyMap<string, DeliveryMessage>;
  /**
   * Ids among `fresh` a conduit had in flight when it died (issue 21 §6): it may have shown
   * them already, and the wake says so.
   */
  again?: ReadonlySet<string>;
  /**
   * The reader's focus and the clock (issue 23 §3): a streaming conduit shows only what
   * wakes (tools/wire/attention.ts); the rest stays pending for the drain. Without it only
   * quiet messages wait.
   */
  attention?: { focus: Focus | null; now: number };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The lines every conduit shows before the messages. `again`: how many of the wake's
 * messages a conduit that died may have shown already (it recorded them in flight and never
 * confirmed them, issue 21 §6), so a repeat is told as one.
 */
export function wakeNotes(input: Pick<WakeInput, 'hidden' | 'invited'> & { again?: number }): string[] {
  const notes: string[] = [];
  if (input.hidden > 0) notes.push(`[attend] ${plural(input.hidden, 'earlier message')} not shown; attend inbox`);
  for (const inv of input.invited) notes.push(`[attend] invited to #${inv.channel}: ${plural(inv.count, 'earlier message')} to read, ${inv.older} older not shown`);
  const again = input.again ?? 0;
  if (again > 0) notes.push(`[attend] ${plural(again, 'message')} below may repeat (a conduit stopped while showing ${again === 1 ? 'it' : 'them'})`);
  return notes;
}

/** How many of `ids` a conduit that died may have shown already (WakeInput.again). */
export function againCount(ids: Iterable<string>, again: ReadonlySet<string> | undefined): number {
  if (again === undefined) return 0;
  let n = 0;
  for (const id of ids) if (again.has(id)) n++;
  return n;
}

/** Teach once, beside the first message a session is shown. */
export function shouldTeach(input: Pick<WakeInput, 'fresh' | 'taught'>): boolean {
  return !input.taught && input.fresh.length > 0;
}

/**
 * Addressed to me, sent by me, or replying (through the `re` chain) to such a message;
 * channel membership alone does not make a message personal. An unresolved chain counts
 * as personal: shown rather than folded, like the drain's party-unknown.
 */
export function isPersonal(m: DeliveryMessage, me: string, byId: ReadonlyMap<string, DeliveryMessage>): boolean {
  if (isFromOrTo(m, me)) return true;
  const seen = new Set<string>([m.id]);
  let re = m.re;
  for (let hop = 0; re !== undefined && hop < 64; hop++) {
    const cur = byId.get(re);
    if (!cur) return true;
    if (seen.has(cur.id)) return false;
    seen.add(cur.id);
    if (isFromOrTo(cur, me)) return true;
    re = cur.re;
  }
  return re !== undefined;
}

/** What of `fresh` a streaming conduit shows now; the rest waits for the turn boundary. */
export function wakingNow(fresh: DeliveryMessage[], attention: WakeInput['attention']): DeliveryMessage[] {
  return fresh.filter((m) => wakesNow(m, attention?.focus, attention?.now ?? 0));
}

interface StreamWake {
  notes: string[];
  /** Shown one by one, oldest first. */
  full: DeliveryMessage[];
  /** Folded into one digest line. */
  digest: { counts: DigestCounts; ids: string[] } | null;
  /** Left pending for the next wake (personal messages past STREAM_FULL_MAX). */
  later: string[];
  teach: boolean;
}

/**
 * The sensor's and the channel push's wake: what wakes now (wakingNow), an urgent message
 * never folded into the digest.
 */
export function planStreamWake(input: WakeInput): StreamWake {
  const fresh = wakingNow(input.fresh, input.attention);
  const teach = shouldTeach({ fresh, taught: input.taught });
  const noted = (shown: DeliveryMessage[]) => wakeNotes({ ...input, again: againCount(shown.map((m) => m.id), input.again) });
  if (fresh.length <= DIGEST_THRESHOLD) return { notes: noted(fresh), full: fresh, digest: null, later: [], teach };
  const byId = new Map(input.known ?? []);
  for (const m of fresh) byId.set(m.id, m);
  const personal: DeliveryMessage[] = [];
  const rest: DeliveryMessage[] = [];
  for (const m of fresh) (m.urgency === 'urgent' || isPersonal(m, input.me, byId) ? personal : rest).push(m);
  const full = personal.slice(0, STREAM_FULL_MAX);
  const later = personal.slice(STREAM_FULL_MAX).map((m) => m.id);
  const digest = rest.length > 0 ? { counts: countDigest(rest, input.me), ids: rest.map((m) => m.id) } : null;
  return { notes: noted([...full, ...rest]), full, digest, later, teach };
}

export type WakeItem =
  | { kind: 'note'; lines: string[] }
  | { kind: 'message'; message: DeliveryMessage; lines: string[] }
  | { kind: 'digest'; ids: string[]; lines: string[] }
  | { kind: 'teach'; lines: string[] };

/** The plan as what a streaming conduit writes: one item per notification / group of lines. */
export function streamItems(plan: StreamWake, names: NameLookup): WakeItem[] {
  const items: WakeItem[] = [];
  if (plan.notes.length > 0) items.push({ kind: 'note', lines: plan.notes });
  for (const m of plan.full) items.push({ kind: 'message', message: m, lines: formatObservation(m, names) });
  if (plan.digest) items.push({ kind: 'digest', ids: plan.digest.ids, lines: [formatDigest(plan.digest.counts)] });
  if (plan.teach && (plan.full.length > 0 || plan.digest)) items.push({ kind: 'teach', lines: [TEACH_LINE] });
  return items;
}

/** The ids a wake item consumes once shown: a message's own, the ones a digest stands for. */
export function itemIds(item: WakeItem): string[] {
  return item.kind === 'message' ? [item.message.id] : item.kind === 'digest' ? item.ids : [];
}
