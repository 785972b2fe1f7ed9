// The session registry (docs/architecture.md, "Identity", issue #3 §5): which Claude process
// each live session id is, so a `/clear` (same process, new id) carries the session's name
// (tools/bus/presence/names.ts), ledger and memberships to the new id. Sessions sharing an
// origin also hold slots (lowest free first), no longer shown: names are given by names.ts.
// The registry is a file, so slots survive
// restarts of attend, and it is keyed by the Claude process (pid + start time) as well as the
// session id, so a `/clear` (same process, new session id) keeps its ordinal and channels.

import { readFileSync } from 'node:fs';
import { processAlive } from '../../identity/system.js';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { renameMember, updateChannels } from '../channels/membership.js';
import { stateDir } from '../store/layout.js';
import { withLock } from '../store/lock.js';
import { moveOwed } from '../delivery/owed.js';
import { HEARTBEAT_FRESH_MS } from './heartbeats.js';

interface RegistryEntry {
  origin: string;
  slot: number;
  pid?: number;
  procStart?: string;
  /** ms since the epoch this session was last observed. */
  seen: number;
  /** The id this session had before a `/clear`. */
  previousSessionId?: string;
  /** Whether `observeSession` has reported `previousSessionId` to its caller yet. */
  handedOver?: boolean;
}

export interface Registry {
  version: 1;
  sessions: Record<string, RegistryEntry>;
}

export interface Observation {
  sessionId: string;
  origin: string;
  pid?: number | undefined;
  procStart?: string | undefined;
  /** Orders new sessions at one origin: the earlier gets the lower slot. */
  startedAt?: number | undefined;
}

export interface Observed {
  slot: number;
  /** Other registered sessions live at the same origin. */
  siblings: number;
  previousSessionId?: string;
  /** The id this session had before a `/clear`, whether or not it was handed over yet: its name follows it. */
  formerly?: string;
}

// Re-observing a known session rewrites the file only this often, so a busy roster does not
// turn every `attend send` into a locked write.
const SEEN_REFRESH_MS = 30_000;

function registryFile(root: string): string {
  return join(stateDir(root), 'registry.json');
}

export function readRegistry(root: string): Registry {
  try {
    const o = JSON.parse(readFileSync(registryFile(root), 'utf8')) as Partial<Registry>;
    if (o && o.version === 1 && typeof o.sessions === 'object' && o.sessions !== null) return o as Registry;
  } catch {
    // missing or torn: start empty (the registry is rebuilt from what is live)
  }
  return { version: 1, sessions: {} };
}

/** Is the process (pid, start time) still running? A zombie is not. */
/** An entry holds its slot while its process runs, or (no process known) while it was seen lately. */
function entryAlive(e: RegistryEntry, now: number): boolean {
  if (e.pid !== undefined) return processAlive(e.pid, e.procStart);
  return now - e.seen <= HEARTBEAT_FRESH_MS;
}

function lowestFree(used: Set<number>): number {
  let i = 0;
  while (used.has(i)) i++;
  return i;
}

function needsWrite(reg: Registry, obs: Observation[], now: number, handOver: boolean): boolean {
  for (const o of obs) {
    const e = reg.sessions[o.sessionId];
    if (!e || e.origin !== o.origin) return true;
    if (o.pid !== undefined && (e.pid !== o.pid || e.procStart !== o.procStart)) return true;
    // `seen` keeps an entry without a process alive; one with a pid lives by its process, so
    // refreshing its `seen` would be a write on every read (issue #12 §4).
    if (o.pid === undefined && now - e.seen > SEEN_REFRESH_MS) return true;
    if (handOver && e.previousSessionId !== undefined && !e.handedOver) return true;
  }
  return false;
}

function summarize(reg: Registry, id: string): Observed | undefined {
  const e = reg.sessions[id];
  if (!e) return undefined;
  let siblings = 0;
  for (const [other, o] of Object.entries(reg.sessions)) if (other !== id && o.origin === e.origin) siblings++;
  return e.previousSessionId !== undefined ? { slot: e.slot, siblings, formerly: e.previousSessionId } : { slot: e.slot, siblings };
}

/**
 * Record what is live and hand out slots. Returns each observed session's slot. With
 * `handOver`, a `/clear` not yet reported is returned once as `previousSessionId`.
 */
export function observeSessions(root: string, obs: Observation[], now: number, opts: { handOver?: boolean } = {}): Map<string, Observed> {
  const handOver = opts.handOver ?? false;
  const fast = readRegistry(root);
  if (!needsWrite(fast, obs, now, handOver)) {
    const out = new Map<string, Observed>();
    for (const o of obs) {
      const s = summarize(fast, o.sessionId);
      if (s) out.set(o.sessionId, s);
    }
    return out;
  }
  const moves: [string, string][] = [];
  const out = new Map<string, Observed>();
  withLock(`${registryFile(root)}.lock`, () => {
    const reg = readRegistry(root);
    const observedIds = new Set(obs.map((o) => o.sessionId));
    // A /clear: the same Claude process shows up under a new session id.
    for (const o of obs) {
      if (reg.sessions[o.sessionId] || o.pid === undefined) continue;
      const old = Object.entries(reg.sessions).find(
        ([id, e]) => id !== o.sessionId && !observedIds.has(id) && e.pid === o.pid && (e.procStart ?? '') === (o.procStart ?? ''),
      );
      if (!old) continue;
      const [oldId, e] = old;
      delete reg.sessions[oldId];
      reg.sessions[o.sessionId] = { ...e, previousSessionId: oldId, handedOver: false };
      moves.push([oldId, o.sessionId]);
    }
    for (const [id, e] of Object.entries(reg.sessions)) {
      if (!observedIds.has(id) && !entryAlive(e, now)) delete reg.sessions[id];
    }
    const fresh = [...obs].sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0) || a.sessionId.localeCompare(b.sessionId));
    for (const o of fresh) {
      let e = reg.sessions[o.sessionId];
      if (!e || e.origin !== o.origin) {
        const used = new Set(Object.entries(reg.sessions).filter(([id, x]) => id !== o.sessionId && x.origin === o.origin).map(([, x]) => x.slot));
        e = { origin: o.origin, slot: lowestFree(used), seen: now };
        reg.sessions[o.sessionId] = e;
      }
      e.seen = now;
      if (o.pid !== undefined) e.pid = o.pid;
      if (o.procStart !== undefined) e.procStart = o.procStart;
    }
    for (const o of obs) {
      const s = summarize(reg, o.sessionId);
      if (!s) continue;
      const e = reg.sessions[o.sessionId];
      if (handOver && e?.previousSessionId !== undefined && !e.handedOver) {
        s.previousSessionId = e.previousSessionId;
        e.handedOver = true;
      }
      out.set(o.sessionId, s);
    }
    writeFileAtomic(registryFile(root), `${JSON.stringify(reg, null, 1)}\n`);
    // Memberships follow the process to its new id, inside the registry lock so a second
    // observer cannot see the new id registered before its channels moved.
    if (moves.length > 0) {
      updateChannels(root, (store) => {
        for (const [from, to] of moves) renameMember(store, from, to);
      });
      for (const [from, to] of moves) moveOwed(root, from, to);
    }
  });
  return out;
}

/**
 * The interface the sensor uses (issue #3): register a live Claude process's session.
 * When the same process (pid + start time) shows up under a new session id — a `/clear` —
 * the ordinal and channel memberships move to the new id, and the old id is returned once
 * as `previousSessionId` so the caller can move what it owns (the consumption ledger).
 * `ordinalIndex` is the slot (0 = alpha), or null when the session is alone at its origin
 * in the first slot and so is shown without an ordinal.
 */
export function observeSession(
  root: string,
  s: { pid: number; procStart: string; sessionId: string; origin: string },
): { ordinalIndex: number | null; previousSessionId?: string } {
  const r = observeSessions(root, [{ sessionId: s.sessionId, origin: s.origin, pid: s.pid, procStart: s.procStart }], Date.now(), { handOver: true }).get(
    s.sessionId,
  );
  if (!r) return { ordinalIndex: null };
  const ordinalIndex = r.slot === 0 && r.siblings === 0 ? null : r.slot;
  return r.previousSessionId !== undefined ? { ordinalIndex, previousSessionId: r.previousSessionId } : { ordinalIndex };
}

/** Whether a session id's registered process still runs (used to judge channel members). */
export function registeredAlive(reg: Registry, id: string, now: number): boolean {
  const e = reg.sessions[id];
  return e !== undefined && entryAlive(e, now);
}
