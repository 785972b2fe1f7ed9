// `attend status` (issue #3 §7): the bus root, message counts per scope, this identity's
// inbox and what delivers to it. `delivery` is filled by the delivery side (sensor and
// ledger state); this command leaves it null so its shape is stable for that extension.

import { type RelayHealth, relayHealth } from '../../bus/remote.js';
import type { Ctx } from '../context.js';
import { joinedChannels } from '../../bus/channels.js';
import { scopeDir, scopeDirName, scopeLabel } from '../../bus/layout.js';
import { type Delivery, deliveryOf, readPresence } from '../../bus/presence.js';
import { listIds, listScopes } from '../../bus/signals.js';
import { readSurfaced } from '../../bus/surfaced.js';
import { receiveScopes } from '../../bus/receive.js';
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
    /** Messages from others newer than the newest one shown to this identity. */
    unread: number;
  };
  channels: string[];
  /** Heartbeats seen for this identity (sensor, drain, chat). */
  presence: Delivery;
  /** Filled by the delivery side: sensor running, consumption ledger state. */
  delivery: Record<string, unknown> | null;
  relay: RelayHealth | null;
}

export function runStatus(ctx: Ctx): StatusResult {
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
  const shown = readSurfaced(root, who.id);
  const unread = inbox.filter((m) => m.fromId !== who.id && (!shown || m.time > shown.time)).length;
  const name = ctx.live().find((p) => p.id === who.id)?.name ?? who.id;
  return {
    busRoot: root,
    me: { id: who.id, kind: who.kind, name, origin: who.origin, resolved: who.resolved },
    scopes,
    inbox: { total: inbox.length, unread },
    channels: channels.map((c) => `#${c}`),
    presence: deliveryOf(readPresence(root), who.id, now),
    delivery: null,
    /** The cross-machine relay (issue 13), or null when none was ever set up here. */
    relay: relayHealth(root, now, (pid) => ctx.procInfo(pid) !== null),
  };
}
