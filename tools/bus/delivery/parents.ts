// The `re` ancestors of messages about to be delivered, read from the receive set (bounded
// per chain), so the party rules (tools/wire/party.ts, tools/wire/wake.ts) can follow a
// thread whose earlier messages were delivered long ago.

import type { DeliveryMessage } from '../../wire/party.js';
import type { Scope } from '../../wire/envelope.js';
import { type Message, type Reporter, findMessage } from '../store/messages.js';

const MAX_PARENT_HOPS = 32;

export function resolveParents(root: string, scopes: Scope[], fresh: Message[], reporter: Reporter): Map<string, DeliveryMessage> {
  const known = new Map<string, DeliveryMessage>();
  for (const m of fresh) known.set(m.id, m);
  const missing = new Set<string>();
  for (const m of fresh) {
    let cur: DeliveryMessage | undefined = m;
    for (let hop = 0; cur?.re !== undefined && hop < MAX_PARENT_HOPS; hop++) {
      const re: string = cur.re;
      if (known.has(re)) {
        cur = known.get(re);
        continue;
      }
      if (missing.has(re)) break;
      const parent = findMessage(root, scopes, re, reporter);
      if (!parent) {
        missing.add(re);
        break;
      }
      known.set(parent.id, parent);
      cur = parent;
    }
  }
  for (const m of fresh) known.delete(m.id);
  return known;
}
