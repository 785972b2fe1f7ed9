// Lineage (spec §7, seed 000 D3): a session started (directly or through its tools) by
// another session is that session's child; one started from a human's terminal is the
// human's child. Pure over the same injected readers as the resolver.

import { type Identity, type IdentityReaders, MAX_HOPS, recordMatches } from './resolve.js';

/**
 * The parent of a resolved identity: the nearest ancestor of its Claude Code process (or of
 * its agent CLI's process) that is itself a live session, else the human (for a session or an
 * agent CLI), else none (a human is a root; a declared agent has no process to climb from).
 */
export function findParent(who: Pick<Identity, 'kind' | 'id' | 'pid' | 'user' | 'cliPid'>, r: IdentityReaders): string | undefined {
  const from = who.pid ?? who.cliPid;
  if (who.kind !== 'agent' || from === undefined) return undefined;
  let info = r.procInfo(from);
  for (let hop = 1; hop <= MAX_HOPS && info && info.ppid > 1; hop++) {
    const pid = info.ppid;
    info = r.procInfo(pid);
    if (!info) break;
    const rec = r.readSessionRecord(pid);
    // The same rule as the resolver's climb: a record that belongs to this very process.
    if (recordMatches(rec, pid, info) && rec.sessionId !== who.id) return rec.sessionId;
  }
  return who.user;
}
