// `attend status`: the bus root, message counts per scope, this identity's inbox — its
// unread count is what the next delivery wake would surface — and what delivers to it.

import type { VerbCtx } from './context.js';
import { processAlive } from '../identity/system.js';
import { type RelayHealth, relayHealth } from '../bus/remote.js';
import { joinedChannels } from '../bus/channels.js';
import { scopeDir, scopeDirName, scopeLabel } from '../bus/layout.js';
import { type Delivery, deliveryOf, readPresence } from '../bus/presence.js';
import { listIds, listScopes } from '../bus/signals.js';
import { peekPending } from '../bus/ledger.js';
import { countQuarantined } from '../bus/quarantine.js';
import { type DeliveryStatus, deliveryStatus } from '../bus/sensor-claim.js';
import { receiveScopes } from '../bus/receive.js';
import { readInbox } from './inbox.js';

export interface ScopeCount {
  scope: string;
  dir: string;
  messages: number;
  /** This identity reads this scope. */
  mine: boolean;
}

export interface StatusResult {
  busRoot: string;
  me: { id: string; kind: 'agent' | 'human'; name: string; origin: string; resolved: boolean };
  scopes: ScopeCount[];
  inbox: {
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
  const inbox = readInbox(ctx);
  const mineDirs = new Set(receiveScopes(root, who).map(scopeDirName));
  const channels = joinedChannels(root, who.id);
  const scopes = listScopes(root).map((scope) => ({
    scope: scope.kind === 'tray' ? `tray ${scope.key}` : scopeLabel(scope),
    dir: scopeDirName(scope),
    messages: listIds(scopeDir(root, scope)).length,
    mine: mineDirs.has(scopeDirName(scope)),
  }));
  const unread = peekPending(root, who, { now, reporter: ctx.reporter }).fresh.length;
  const name = ctx.live().find((p) => p.id === who.id)?.name ?? who.id;
  return {
    busRoot: root,
    me: { id: who.id, kind: who.kind, name, origin: who.origin, resolved: who.resolved },
    scopes,
    inbox: { total: inbox.length, unread },
    channels: channels.map((c) => `#${c}`),
    presence: deliveryOf(readPresence(root), who.id, now),
    delivery: deliveryStatus(root, who.id),
    quarantined: countQuarantined(root),
    relay: relayHealth(root, now, (pid) => processAlive(pid, undefined, ctx.procInfo)),
  };
}
