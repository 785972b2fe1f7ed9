// The sensor's watch on its Claude process, once a tick: gone (by the one liveness rule,
// injected: tools/identity/system.ts `processAlive`, where a zombie or a recycled pid is gone),
// or given a new session id by `/clear` (the session record names another id), which the
// sensor follows, carrying its ledger, claim and presence (the same hand-over as the drain
// and the MCP channel push: tools/bus/delivery/handover.ts). Unit-tested over a temporary bus with the
// liveness check and the record reader injected.

import type { Identity, SessionRecord } from '../identity/resolve.js';
import { handOver, moveLedger, moveSensorClaim } from '../bus/delivery/index.js';
import { removePresence } from '../bus/presence/index.js';

export interface SessionWatchDeps {
  root: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The sensor's own pid (its claim). */
  pid: number;
  /** Is the process that was recorded with this start time still that process? */
  alive(pid: number, start: string | undefined): boolean;
  /** The session record Claude Code keeps for its pid. */
  readRecord(pid: number): SessionRecord | null;
  warn(line: string): void;
  /** The presence role the watcher beats as (the deliverer's differs). */
  role?: 'sensor' | 'deliverer';
}

type SessionCheck = { gone: true } | { gone: false; who: Identity; cleared?: string };

/**
 * Check the session behind `who`: gone, the same, or `/clear`-ed to a new id (then already
 * followed on the bus, and `cleared` names the old id). A sensor outside any Claude Code
 * session (a person's) has no process to watch and is never gone this way.
 */
export function checkSession(deps: SessionWatchDeps, who: Identity): SessionCheck {
  const claudePid = who.pid;
  if (!who.resolved || claudePid === undefined) return { gone: false, who };
  if (!deps.alive(claudePid, who.record?.procStart)) return { gone: true };
  const rec = deps.readRecord(claudePid);
  if (!rec || rec.sessionId === who.id) return { gone: false, who };
  const old = who.id;
  const next: Identity = { ...who, id: rec.sessionId, sessionId: rec.sessionId, from: `claude:${rec.sessionId}`, record: rec };
  handOver(deps.root, next, deps.env);
  moveLedger(deps.root, old, next.id);
  moveSensorClaim(deps.root, old, next.id, deps.pid);
  removePresence(deps.root, old, deps.role ?? 'sensor');
  deps.warn(`attend: followed /clear from ${old} to ${next.id}`);
  return { gone: false, who: next, cleared: old };
}
