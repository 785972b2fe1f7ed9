// `attend status`: the bus root, message counts per scope, this identity's inbox — its
// unread count is what the next delivery wake would surface — and what delivers to it.

import type { VerbCtx } from './context.js';
import { processAlive } from '../identity/system.js';
import { type RelayHealth, relayHealth } from '../bus/presence/index.js';
import { joinedChannels } from '../bus/channels/index.js';
import { scopeDirName } from '../bus/store/index.js';
import { scopeName } from '../wire/display.js';
import { type Delivery, deliveryOf, readPresence } from '../bus/presence/index.js';
import { listScopes, silentReporter } from '../bus/store/index.js';
import { withListings } from '../bus/store/index.js';
import { createGate } from '../bus/trust/index.js';
import { busError } from '../wire/errors.js';
import { peekPending } from '../bus/delivery/index.js';
import { countQuarantined } from '../bus/store/index.js';
import { type DeliveryStatus, deliveryStatus } from '../bus/delivery/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import { countInbox, withInboxListings } from './inbox.js';

interface ScopeCount {
  scope: string;
  dir: string;
  messages: number;
  /** This identity reads this scope. */
  mine: boolean;
}

interface StatusResult {
  busRoot: string;
  me: { id: string; kind: 'agent' | 'human'; name: string; origin: string; resolved: boolean };
  scopes: ScopeCount[];
  inbox: {
    /** Messages of the receive set for this identity, held ones included (docs/reference.md). */
    total: number;
    /** What the next delivery wake would surface (the consumption ledger's answer). */
    unread: number;
  };
  channels: string[];
  /** Heartbeats seen for this identity (sensor, drain, chat). */
  presence: Delivery;
  /** Sensor running, and what the consumption ledger holds. */
  delivery: DeliveryStatus;
  /** Files no reader could parse, moved to quarantine/ with their reason (issue #10 §2). */
  quarantined: number;
  /** The cross-machine relay (issue 13), or null when none was ever set up here. */
  relay: RelayHealth | null;
}

export function runStatus(ctx: VerbCtx): StatusResult {
  const root = ctx.root();
  const who = ctx.identity();
  const now = ctx.now();
  // The counts come from the listing caches (tools/bus/store/listing.ts): nothing is read but what
  // arrived since the last listing. Under a policy that did not parse nothing is delivered,
  // and status says so as the inbox does.
  const broken = createGate(root, who).broken();
  if (broken !== null) throw busError(broken, 'fix or remove the policy file; attend grants shows what it holds');
  const mine = receiveScopes(root, who);
  const mineDirs = new Set(mine.map(scopeDirName));
  const all = listScopes(root);
  const others = all.filter((s) => !mineDirs.has(scopeDirName(s)));
  const channels = joinedChannels(root, who.id);
  const sizes = new Map<string, number>();
  // The inbox's own total (a person's includes their mail in other projects' trays).
  const total = withInboxListings(ctx, (inbox) => {
    for (const l of inbox.listings) sizes.set(l.dirName, l.size);
    return countInbox(ctx, inbox);
  });
  // Other sessions' trays are only counted: a problem there is theirs to hear about.
  withListings(root, others.filter((s) => !sizes.has(scopeDirName(s))), { now, reporter: silentReporter }, (ls) => {
    for (const l of ls) sizes.set(l.dirName, l.size);
  });
  // What the next wake would deliver (with no ledger yet, a cold-start plan over the listings
  // just brought up to date).
  const unread = peekPending(root, who, { now, reporter: ctx.reporter }).fresh.length;
  const scopes = all.map((scope) => ({
    scope: scope.kind === 'tray' ? `tray ${scope.key}` : scopeName(scope),
    dir: scopeDirName(scope),
    messages: sizes.get(scopeDirName(scope)) ?? 0,
    mine: mineDirs.has(scopeDirName(scope)),
  }));
  const name = ctx.live().find((p) => p.id === who.id)?.name ?? who.id;
  return {
    busRoot: root,
    me: { id: who.id, kind: who.kind, name, origin: who.origin, resolved: who.resolved },
    scopes,
    inbox: { total, unread },
    channels: channels.map((c) => `#${c}`),
    presence: deliveryOf(readPresence(root), who.id, now),
    delivery: deliveryStatus(root, who.id),
    quarantined: countQuarantined(root),
    relay: relayHealth(root, now, (pid) => processAlive(pid, undefined, ctx.procInfo)),
  };
}
