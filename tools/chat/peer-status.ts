// How a live peer is shown in the roster line and /peers: Claude Code's own status for a
// session (busy/idle), and how a message reaches it when that is not at once: `next turn`,
// `waiting` (tools/bus/presence/reach.ts reachOf, the words every front end uses).

import { type Peer, reachOf } from '../bus/presence/index.js';
import { type Reach, reachShort } from '../wire/display.js';
import { neutralize } from '../wire/render.js';
import { clockTime } from '../wire/attention.js';

interface PeerStatus {
  /** busy, idle, live (a session without a status) or here (a human). */
  status: string;
  reach: Reach;
  /** The reach as the roster words it: null when a live conduit shows it at once. */
  note: string | null;
}

export function peerStatus(p: Peer, now = Date.now()): PeerStatus {
  const s = p.record?.status;
  // The record is written by the session's process: its status is data, shown neutralised.
  const base = typeof s === 'string' && s.length > 0 ? neutralize(s) : p.kind === 'human' ? 'here' : 'live';
  // In focus (issue 23 §3): what is sent waits for its turn unless it is urgent (/urgent).
  const status = p.focusUntil !== undefined && p.focusUntil > now ? `${base}, focus to ${clockTime(p.focusUntil)}` : base;
  const reach = reachOf(p, now);
  const note = reach.word === 'shown' ? null : reachShort(reach);
  return { status, reach, note };
}

/** `idle`, `idle, next turn`, `idle, waiting`. */
export function peerStatusText(p: Peer, now = Date.now()): string {
  const s = peerStatus(p, now);
  return s.note !== null ? `${s.status}, ${s.note}` : s.status;
}
