// Notices (invite, kick, dissolve) are ordinary messages on the bus, written by the actor's
// resolved identity (from_kind/from_id are the actor's, never a flag), addressed to the
// members concerned. A notice goes where the addressee reads: an agent's tray (its origin),
// and #open for a human or a session whose origin is unknown (issue #3 §1, §3). A notice is
// quiet (issue 23 §3): status chatter never wakes a model on its own; it is shown at the
// addressee's next turn boundary.

import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { attendKey } from '../../wire/names.js';
import { envelopeFrom } from '../store/compose.js';
import { writeSignal } from '../store/messages.js';
import type { Signer } from '../trust/signing.js';

export interface NoticeTarget {
  id: string;
  kind: 'agent' | 'human';
  /** Where the agent's session runs, when known. */
  origin?: string | undefined;
}

interface NoticeWritten {
  id: string;
  to: string;
  files: string[];
}

function noticeScopes(targets: NoticeTarget[]): Scope[] {
  const seen = new Map<string, Scope>();
  for (const t of targets) {
    const scope: Scope = t.kind === 'agent' && t.origin !== undefined ? { kind: 'tray', key: attendKey(t.origin) } : { kind: 'open' };
    seen.set(scope.kind === 'tray' ? scope.key : '_broadcast', scope);
  }
  return [...seen.values()];
}

/** Write one notice to `targets` (one file per destination directory, each with the full `to`). */
export function writeNotice(root: string, actor: Identity, newId: () => string, targets: NoticeTarget[], body: string, signer?: Signer): NoticeWritten | null {
  if (targets.length === 0) return null;
  const to = [...new Set(targets.map((t) => t.id))].join(',');
  const env = envelopeFrom(actor, { to, body, urgency: 'quiet' });
  const id = newId();
  const files = noticeScopes(targets).map((scope) => writeSignal(root, scope, id, env, signer));
  return { id, to, files };
}
