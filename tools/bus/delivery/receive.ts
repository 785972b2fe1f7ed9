// A session's receive set (docs/architecture.md, "Delivery"): its own tray, `_broadcast/`, and the channels it joined.

import type { Identity } from '../../identity/resolve.js';
import { type Scope, addressees } from '../../wire/envelope.js';
import { attendKey } from '../../wire/names.js';
import { joinedChannels } from '../channels/membership.js';
import type { Message } from '../store/messages.js';

export function receiveScopes(root: string, who: Identity): Scope[] {
  const scopes: Scope[] = [{ kind: 'tray', key: attendKey(who.origin) }, { kind: 'open' }];
  for (const name of joinedChannels(root, who.id)) scopes.push({ kind: 'channel', name });
  return scopes;
}

/**
 * Whether a message in the receive set is this identity's to see. A tray is shared by every
 * session at one origin: mail addressed to a sibling there is not ours (issue #3 §5).
 */
export function isForMe(msg: Message, who: Identity): boolean {
  if (msg.scope.kind !== 'tray') return true;
  if (msg.fromId === who.id) return true;
  const ids = addressees(msg.to);
  return ids.length === 0 || ids.includes(who.id);
}
