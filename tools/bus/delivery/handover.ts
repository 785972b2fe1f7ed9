// The `/clear` hand-over (docs/architecture.md, "Identity"), one function for every conduit (issue #9 §2): a Claude
// process that got a new session id keeps what it owns. The sensor, the drain and the MCP
// channel push each call this before they deliver, so whichever runs first after a
// `/clear` moves the consumption ledger (the registry moves ordinal, memberships and the
// owed backlog), and none of them cold-starts on the new id and repeats recent traffic.

import type { Identity } from '../../identity/resolve.js';
import { moveLedger } from './ledger.js';
import { observeSession } from '../presence/registry.js';

export function handOver(root: string, who: Identity, env: Readonly<Record<string, string | undefined>>): void {
  if (!who.resolved) return;
  // A process started before the /clear still carries the old id in its environment.
  const envSid = env.CLAUDE_CODE_SESSION_ID;
  if (envSid && envSid !== who.id) moveLedger(root, envSid, who.id);
  if (who.pid !== undefined) {
    const seen = observeSession(root, { pid: who.pid, procStart: who.record?.procStart ?? '', sessionId: who.id, origin: who.origin });
    if (seen.previousSessionId) moveLedger(root, seen.previousSessionId, who.id);
  }
}
