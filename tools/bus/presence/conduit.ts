// Which conduit has just shown a party a message (issue 24: the page and `attend ask --wait
// shown` name it alike). The ledger says that a message was shown, not by what; the conduit
// is read from the party's presence at the moment the showing is seen.

import { HEARTBEAT_FRESH_MS, type PresenceRecord, deliveryOf } from './heartbeats.js';

/**
 * A drain in the last few seconds (the Stop hook at its turn boundary), else its live
 * conduit, as reachOf (tools/bus/presence/reach.ts) ranks them; undefined when nothing says.
 */
export function conduitOf(records: PresenceRecord[], id: string, now: number): string | undefined {
  const d = deliveryOf(records, id, now);
  const fresh = (t: number | null | undefined, within = HEARTBEAT_FRESH_MS) => typeof t === 'number' && now - t <= within;
  if (fresh(d.drain, 5_000)) return 'Stop hook';
  if (fresh(d.deliverer)) return 'deliverer';
  if (fresh(d.sensor)) return 'sensor';
  if (fresh(d.chat)) return 'chat';
  if (fresh(d.web)) return 'web';
  return undefined;
}
