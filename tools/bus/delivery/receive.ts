// A session's receive set (docs/architecture.md, "Delivery"): its own tray, `_broadcast/`, and the channels it joined.
// Which messages there are the session's to see (a sibling's tray mail is not) is
// tools/wire/visibility.ts maySee.

import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { attendKey } from '../../wire/names.js';
import { joinedChannels } from '../channels/membership.js';

export function receiveScopes(root: string, who: Identity): Scope[] {
  const scopes: Scope[] = [{ kind: 'tray', key: attendKey(who.origin) }, { kind: 'open' }];
  for (const name of joinedChannels(root, who.id)) scopes.push({ kind: 'channel', name });
  return scopes;
}
