// Truthful delivery (issue #10 §15, issue 21 items 7 and 8): at send time, per recipient, how
// the message reaches it (tools/bus/presence/reach.ts reachOf: shown by a live conduit, at its
// next turn, waiting for a party with no conduit live, held by a relay or a hub); and
// afterwards, from the consumption ledgers — not a guess — who has been shown a message the
// caller sent.

import type { VerbCtx } from './context.js';
import { readChannels } from '../bus/channels/index.js';
import { scopeDirName } from '../bus/store/index.js';
import { type ShownBy, conduitShown, listLedgerIds, shownByOf } from '../bus/delivery/index.js';
import { knownParties, localHostName, peersEverywhere, reachOf, readFocusAll, readKnownNames, relayHealth } from '../bus/presence/index.js';
import type { Peer } from '../bus/presence/index.js';
import { conduitOf, type PresenceRecord, readPresence } from '../bus/presence/index.js';
import { type Message, listScopes, mergeDescending, readMessage, withListings } from '../bus/store/index.js';
import { processAlive } from '../identity/system.js';
import { type Urgency, addressees } from '../wire/envelope.js';
import { focusNote, wakesNow } from '../wire/attention.js';
import { type Reach, partyName, peerLabel, waitingWhy } from '../wire/display.js';
import { neutralize } from '../wire/render.js';

export interface RecipientDelivery {
  id: string;
  name: string;
  kind: 'agent' | 'human';
  reach: Reach;
}

/**
 * Who a message written to `to` is for, and how it reaches each. `recipients` are the peers
 * the send resolved (live, of another machine, or gone); anyone else `to` names (a channel's
 * members, #open's live parties) is looked up live, then among the known.
 */
export function deliveryFor(ctx: VerbCtx, to: string, recipients: Peer[] = []): RecipientDelivery[] {
  const me = ctx.identity().id;
  const now = ctx.now();
  const root = ctx.root();
  const live = ctx.live();
  const byId = new Map<string, Peer>([...recipients, ...live].map((p) => [p.id, p]));
  let ids: string[];
  if (to === '*') ids = live.map((p) => p.id);
  else if (to.startsWith('#')) ids = Object.keys(readChannels(root).channels[to.slice(1)]?.members ?? {});
  else ids = addressees(to);
  const wanted = [...new Set(ids)].filter((id) => id !== me);
  // The rest (channel members that are not live) are read only when there are some.
  if (wanted.some((id) => !byId.has(id))) {
    const everywhere = peersEverywhere(root, live, now);
    for (const p of everywhere) if (!byId.has(p.id)) byId.set(p.id, p);
    const localHost = localHostName(root);
    for (const p of knownParties(root, new Set(everywhere.map((x) => x.id)), { now, localHost })) if (!byId.has(p.id)) byId.set(p.id, p);
  }
  const liveNames = new Map(live.map((p) => [p.id, p.name]));
  let known: ReadonlyMap<string, string> | undefined;
  let relayDown: boolean | undefined;
  return wanted.map((id) => {
    const p = byId.get(id);
    // A recipient the send resolved carries its name (a gone one its last): no second read of the known names.
    const name = p && !(p.gone && p.name === p.id) ? peerLabel(p) : partyName(id, liveNames, (known ??= readKnownNames(root, now)));
    let reach = reachOf(p, now);
    // Mail for another machine leaves through this machine's relay: without one it is held here.
    if (p?.host !== undefined && reach.word !== 'held') {
      relayDown ??= relayHealth(root, now, (pid) => processAlive(pid, undefined, ctx.procInfo))?.running !== true;
      if (relayDown) reach = { word: 'held', by: "this machine's relay (not running)" };
    }
    return { id, name, kind: p?.kind ?? (id.includes('-') && id.length > 20 ? 'agent' : 'human'), reach };
  });
}

/**
 * Attention at send (issue 23 §3): a recipient a live conduit would show the message to, that
 * it will not wake (a quiet message, or the recipient in focus), is shown it at its next turn
 * boundary instead, and its reach says so. Returns the notes the sender is told: one per
 * recipient in focus.
 */
export function applyAttention(ctx: VerbCtx, rs: RecipientDelivery[], urgency: Urgency | undefined): string[] {
  if (urgency === 'urgent' || rs.length === 0) return [];
  const now = ctx.now();
  const focus = readFocusAll(ctx.root(), now);
  const fromKind = ctx.identity().kind;
  const notes: string[] = [];
  for (const r of rs) {
    if (r.reach.word !== 'shown' || r.kind !== 'agent') continue;
    const f = focus.get(r.id);
    if (wakesNow({ urgency, fromKind }, f, now)) continue;
    r.reach = { word: 'next-turn' };
    if (f) notes.push(focusNote(neutralize(r.name), f));
  }
  return notes;
}

/**
 * One line for a terminal, said when not everyone is shown it at once: who is shown it, whose
 * next turn delivers it, for whom it waits (and since when), and what holds it.
 */
export function describeDelivery(rs: RecipientDelivery[], audience: string, now: number): string {
  if (rs.length === 0) return `nobody else is live for ${audience} now; it waits in history for whoever comes`;
  const of = (w: Reach['word']) => rs.filter((r) => r.reach.word === w);
  const name = (r: RecipientDelivery) => neutralize(r.name);
  const parts: string[] = [];
  const shown = of('shown');
  if (shown.length) parts.push(`shown to ${shown.map((r) => `${name(r)}${r.reach.by !== undefined ? ` (${r.reach.by})` : ''}`).join(', ')}`);
  const next = of('next-turn');
  if (next.length) parts.push(`${next.length === 1 ? 'at its next turn' : 'at their next turn'}: ${next.map(name).join(', ')}`);
  const waiting = of('waiting');
  if (waiting.length === 1) parts.push(`waits for ${name(waiting[0]!)}, ${waitingWhy(waiting[0]!.reach, now)}`);
  else if (waiting.length > 1) parts.push(`waits for ${waiting.map((r) => `${name(r)} (${waitingWhy(r.reach, now)})`).join(', ')}`);
  const held = new Map<string, string[]>();
  for (const r of of('held')) held.set(r.reach.by ?? 'the bus', [...(held.get(r.reach.by ?? 'the bus') ?? []), name(r)]);
  for (const [by, names] of held) parts.push(`held for ${names.join(', ')} by ${by}`);
  return parts.join('; ');
}

interface SentRow {
  message: Message;
  /** Per addressee (or, for #open and channels, per identity with a ledger): shown yet? */
  recipients: { id: string; name: string; shown: boolean; by?: string }[];
}

/**
 * The caller's `limit` newest messages, newest first, each once (a fan-out writes one id into
 * several directories): every directory's listing walked newest first as one, and a message
 * opened only when its entry names the caller as its sender (or could not be read when it was
 * listed). What it reads is what it shows, not the history (issue 24: the web's sent list).
 */
function newestSent(ctx: VerbCtx, limit: number): Message[] {
  const root = ctx.root();
  const me = ctx.identity().id;
  const out: Message[] = [];
  if (limit < 1) return out;
  const seen = new Set<string>();
  withListings(root, listScopes(root), { now: ctx.now(), reporter: ctx.reporter }, (ls) => {
    const merged = mergeDescending(ls);
    for (let p = merged.next(); p !== null && out.length < limit; p = merged.next()) {
      const { listing, entry } = p;
      if (seen.has(entry.id) || (!entry.unknown && entry.fromId !== me)) continue;
      const m = readMessage(root, listing.scope, entry.id, ctx.reporter);
      if (!m || m.fromId !== me) continue;
      seen.add(m.id);
      out.push(m);
    }
  });
  return out;
}

/**
 * `attend inbox --sent`: the caller's newest sent messages and, for each, who has been shown
 * it according to their consumption ledgers. A message counts as shown once a conduit
 * surfaced it (or announced it in a digest or a cold-start note).
 */
export function runSent(ctx: VerbCtx, input: { limit: number }): { messages: SentRow[] } {
  const root = ctx.root();
  const me = ctx.identity().id;
  const live = new Map(ctx.live().map((p) => [p.id, p.name]));
  const known = readKnownNames(root, ctx.now());
  const newest = newestSent(ctx, input.limit);
  const store = readChannels(root);
  const ledgerIds = (): string[] => listLedgerIds(root);
  // Each recipient's ledger read once for the whole list: whether it was shown each message,
  // and by which conduit, as its ledger recorded when the wake was (Ledger.via). A ledger from
  // before conduits were kept says only "shown": for it, what delivers to them now
  // (tools/bus/presence/conduit.ts), which is what showed them a message seen shown just now.
  const now = ctx.now();
  let records: PresenceRecord[] | undefined;
  const presence = () => (records ??= readPresence(root));
  const ledgers = new Map<string, (dirName: string, id: string) => ShownBy>();
  const shownTo = (sid: string, dir: string, id: string): ShownBy => {
    let f = ledgers.get(sid);
    if (!f) ledgers.set(sid, (f = shownByOf(root, sid)));
    return f(dir, id);
  };
  const rows = newest.map((m): SentRow => {
    let ids: string[];
    if (m.to === '*') ids = ledgerIds();
    else if (m.to.startsWith('#')) ids = Object.keys(store.channels[m.to.slice(1)]?.members ?? {});
    else ids = addressees(m.to);
    const dir = scopeDirName(m.scope);
    return {
      message: m,
      recipients: ids.filter((id) => id !== me).map((id) => {
        const s = shownTo(id, dir, m.id);
        const by = conduitShown(s, () => conduitOf(presence(), id, now));
        return { id, name: partyName(id, live, known), shown: s.shown, ...(by !== undefined ? { by } : {}) };
      }),
    };
  });
  return { messages: rows };
}
