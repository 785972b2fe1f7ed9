// How a live peer is shown in the roster line and /peers: Claude Code's own status for a
// session (busy/idle), and "deaf" when nothing delivers to it (tools/bus/presence/roster.ts isDeaf).

import { isDeaf, type Peer } from '../bus/presence/index.js';
import { neutralize } from '../wire/render.js';

interface PeerStatus {
  /** busy, idle, live (a session without a status) or here (a human). */
  status: string;
  deaf: boolean;
}

export function peerStatus(p: Peer): PeerStatus {
  const s = p.record?.status;
  // The record is written by the session's process: its status is data, shown neutralised.
  const status = typeof s === 'string' && s.length > 0 ? neutralize(s) : p.kind === 'human' ? 'here' : 'live';
  return { status, deaf: isDeaf(p) };
}

/** `idle`, or `idle, deaf`. */
export function peerStatusText(p: Peer): string {
  const s = peerStatus(p);
  return s.deaf ? `${s.status}, deaf` : s.status;
}
