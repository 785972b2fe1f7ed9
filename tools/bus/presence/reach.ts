// The one rule for how a message reaches a party (issue 21 items 7 and 8): every front end
// (the send's note, `peers`, the chat's roster, MCP results, a relay announcing its
// members) asks reachOf and words the answer with tools/wire/display.ts reachText.

import type { Reach } from '../../wire/display.js';
import { HEARTBEAT_FRESH_MS } from './heartbeats.js';
import type { Peer } from './peer.js';

/** A drain this recent still delivers for a party with no live session record (a declared agent's loop). */
const DRAIN_RECENT_MS = 10 * 60_000;

/**
 * How a message to `p` reaches it now. `undefined` (nobody by that id is live or known) and
 * a party that is gone wait; a gone party of another machine is held by the hub until that
 * machine is back. A live session is `next-turn` when its Stop hook will run: it has
 * drained, or the plugin's SessionStart hook ran for it (a fresh session that has not yet
 * ended a turn is not deaf: its first turn boundary delivers).
 */
export function reachOf(p: Pick<Peer, 'kind' | 'delivery' | 'lastSeen' | 'host' | 'gone' | 'record' | 'reach'> | undefined, now: number): Reach {
  if (!p) return { word: 'waiting', since: null };
  if (p.gone) {
    if (p.host !== undefined) return { word: 'held', by: `the hub until ${p.host} is back` };
    return { word: 'waiting', since: p.lastSeen > 0 ? p.lastSeen : null };
  }
  if (p.host !== undefined) {
    // Judged on its own machine (tools/relay/main.ts announces each member's reach).
    const r = p.reach;
    if (!r) return { word: 'shown', by: `on ${p.host}` };
    return r.word === 'shown' ? { word: 'shown', by: `${r.by ?? 'live'} on ${p.host}` } : r;
  }
  const d = p.delivery;
  const fresh = (t: number | null | undefined) => t !== null && t !== undefined && now - t <= HEARTBEAT_FRESH_MS;
  if (d && fresh(d.deliverer)) return { word: 'shown', by: 'deliverer' };
  if (d && fresh(d.sensor)) return { word: 'shown', by: 'sensor' };
  if (d && fresh(d.chat)) return { word: 'shown', by: 'chat' };
  if (d && fresh(d.web)) return { word: 'shown', by: 'web' };
  if (p.kind === 'agent' && d) {
    const hooked = p.record !== undefined && ((d.hook ?? null) !== null || d.drain !== null);
    if (hooked || (d.drain !== null && now - d.drain <= DRAIN_RECENT_MS)) return { word: 'next-turn' };
  }
  // Live, and nothing of it delivers: it is seen now, so what it waits for is a conduit.
  const beats = [d?.sensor, d?.drain, d?.chat, d?.web].filter((t): t is number => typeof t === 'number');
  return { word: 'waiting', since: beats.length > 0 ? Math.max(...beats) : null, by: 'live, no conduit running' };
}
