// A party as the roster sees it, in a module of its own: the remote roster (remote.ts), the
// known names (names.ts) and the live roster (roster.ts) all speak of peers, and none of them
// imports another for the type (issue 19: the names -> remote -> roster type cycle).

import type { SessionRecord } from '../../identity/resolve.js';
import type { Reach } from '../../wire/display.js';
import type { Delivery, PresenceRecord } from './heartbeats.js';

export interface Peer {
  id: string;
  kind: 'agent' | 'human';
  origin: string;
  /** Display name: given once and kept while it lives (tools/bus/presence/names.ts). */
  name: string;
  /** Every earlier name of it: each still resolves to it (tools/bus/presence/targets.ts). */
  aliases?: string[];
  record?: SessionRecord;
  presence: PresenceRecord[];
  lastSeen: number;
  /** What delivers to this peer (sensor heartbeat, recent drain, chat); set by listLive. */
  delivery?: Delivery;
  /** The machine it lives on, for members on other machines (tools/bus/presence/remote.ts); absent here. */
  host?: string;
  /** Not live: a party the bus has known (tools/bus/presence/known.ts); `lastSeen` is when it was last seen. */
  gone?: true;
  /** A member of another machine: how its own machine said a message reaches it. */
  reach?: Reach;
  /** In focus until (ms), for a front end that shows it (the chat's roster, issue 23 §3); read by readFocusAll. */
  focusUntil?: number;
}
