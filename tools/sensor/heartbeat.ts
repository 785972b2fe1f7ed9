// The sensor's presence (state/presence/<id>~sensor.json): written at start, after a /clear
// and every HEARTBEAT_MS of the tick, removed at exit. A failed write is a warning, never the
// end of the sensor. The clock is injected, so this is unit-tested over a temporary bus.

import type { Identity } from '../identity/resolve.js';
import { removePresence, writePresence } from '../bus/presence/index.js';

export const HEARTBEAT_MS = 30_000;

interface HeartbeatDeps {
  root: string;
  /** Whose beat: the sensor's (default) or the deliverer's (tools/sensor/deliverer.ts). */
  role?: 'sensor' | 'deliverer';
  pid: number;
  now(): number;
  warn(line: string): void;
}

/** Write the sensor's presence now. */
export function beat(deps: HeartbeatDeps, who: Identity): void {
  try {
    writePresence(deps.root, { id: who.id, kind: who.kind, origin: who.origin, heartbeat: deps.now(), pid: deps.pid, role: deps.role ?? 'sensor' });
  } catch (err) {
    deps.warn(`attend: heartbeat failed: ${(err as Error).message}`);
  }
}

export function removeBeat(deps: HeartbeatDeps, who: Identity): void {
  removePresence(deps.root, who.id, deps.role ?? 'sensor');
}

/**
 * The periodic beat, counted from when it is made: `due(who)`, once a tick, beats when
 * HEARTBEAT_MS have passed since the last periodic beat and says whether it did (the tick
 * then wakes the delivery too, a safety net for an event the watcher missed).
 */
export function createHeartbeat(deps: HeartbeatDeps): { due(who: Identity): boolean } {
  let last = deps.now();
  return {
    due: (who) => {
      if (deps.now() - last < HEARTBEAT_MS) return false;
      last = deps.now();
      beat(deps, who);
      return true;
    },
  };
}
