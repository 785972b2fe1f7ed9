// Truthful delivery (issue #10 §15): at send time, per recipient, whether something delivers
// the message now (a live sensor, an open chat), at the recipient's next turn (a Stop-hook
// drain seen lately) or only when it comes back; and afterwards, from the consumption
// ledgers — not a guess — who has been shown a message the caller sent.

import type { VerbCtx } from './context.js';
import { readChannels } from '../bus/channels/index.js';
import { scopeDirName } from '../bus/store/index.js';
import { isConsumedBy, listLedgerIds } from '../bus/delivery/index.js';
import { HEARTBEAT_FRESH_MS, readKnownNames } from '../bus/presence/index.js';
import type { Peer } from '../bus/presence/index.js';
import { type Message, listScopes, readScopes } from '../bus/store/index.js';
import { addressees } from '../wire/envelope.js';
import { partyName } from '../wire/display.js';

export type When = 'now' | 'next-turn' | 'later';

export interface RecipientDelivery {
  id: string;
  name: string;
  kind: 'agent' | 'human';
  when: When;
}

function whenFor(p: Peer | undefined, now: number): When {
  const d = p?.delivery;
  if (!p || !d) return 'later';
  if ((d.sensor !== null && now - d.sensor <= HEARTBEAT_FRESH_MS) || (d.chat !== null && now - d.chat <= HEARTBEAT_FRESH_MS)) return 'now';
  if (p.kind === 'agent' && d.delivering) return 'next-turn';
  // A live human with no chat open reads with `attend inbox` whenever they look.
  return p.kind === 'human' ? 'next-turn' : 'later';
}

/** Who a message written to `to` in `scopes` is for, and when each will be shown it. */
export function deliveryFor(ctx: VerbCtx, to: string): RecipientDelivery[] {
  const me = ctx.identity().id;
  const now = ctx.now();
  const live = ctx.live();
  const byId = new Map(live.map((p) => [p.id, p]));
  const liveNames = new Map(live.map((p) => [p.id, p.name]));
  // The known names are read only for a recipient that is not live (most sends have none).
  let known: ReadonlyMap<string, string> | undefined;
  let ids: string[];
  if (to === '*') ids = live.map((p) => p.id);
  else if (to.startsWith('#')) ids = Object.keys(readChannels(ctx.root()).channels[to.slice(1)]?.members ?? {});
  else ids = addressees(to);
  return [...new Set(ids)]
    .filter((id) => id !== me)
    .map((id) => {
      const p = byId.get(id);
      const name = p?.name ?? partyName(id, liveNames, (known ??= readKnownNames(ctx.root(), now)));
      return { id, name, kind: p?.kind ?? (id.includes('-') && id.length > 20 ? 'agent' : 'human'), when: whenFor(p, now) };
    });
}

/** One line for a terminal: who sees it now, at their next turn, and not until they are back. */
export function describeDelivery(rs: RecipientDelivery[], audience: string): string {
  if (rs.length === 0) return `nobody else is live for ${audience} now; it waits in history for whoever comes`;
  const by = (w: When) => rs.filter((r) => r.when === w).map((r) => r.name);
  const parts: string[] = [];
  if (by('now').length) parts.push(`now: ${by('now').join(', ')}`);
  if (by('next-turn').length) parts.push(`at their next turn: ${by('next-turn').join(', ')}`);
  if (by('later').length) parts.push(`not until they are back: ${by('later').join(', ')}`);
  return `delivery ${parts.join('; ')}`;
}

interface SentRow {
  message: Message;
  /** Per addressee (or, for #open and channels, per identity with a ledger): shown yet? */
  recipients: { id: string; name: string; shown: boolean }[];
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
  const mine = new Map<string, Message>();
  for (const m of readScopes(root, listScopes(root), ctx.reporter)) if (m.fromId === me && !mine.has(m.id)) mine.set(m.id, m);
  const newest = [...mine.values()].sort((a, b) => b.time - a.time || (a.id < b.id ? 1 : -1)).slice(0, input.limit);
  const store = readChannels(root);
  const ledgerIds = (): string[] => listLedgerIds(root);
  const rows = newest.map((m): SentRow => {
    let ids: string[];
    if (m.to === '*') ids = ledgerIds();
    else if (m.to.startsWith('#')) ids = Object.keys(store.channels[m.to.slice(1)]?.members ?? {});
    else ids = addressees(m.to);
    const dir = scopeDirName(m.scope);
    return {
      message: m,
      recipients: ids.filter((id) => id !== me).map((id) => ({ id, name: partyName(id, live, known), shown: isConsumedBy(root, id, dir, m.id) })),
    };
  });
  return { messages: rows };
}
