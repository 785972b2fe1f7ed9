// Who is live (docs/architecture.md, "Identity" and "Delivery"): Claude Code sessions whose record belongs to a running process
// with a matching start time, plus anyone whose attend heartbeat is fresh.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcInfo, SessionRecord } from '../../identity/resolve.js';
import { normalizeOrigin } from '../../identity/resolve.js';
import { processAlive, readSessionRecordFile } from '../../identity/system.js';
import { type Delivery, deliveryOf, isFresh, readPresence, type PresenceRecord } from './heartbeats.js';
import { type Observation, type Observed, observeSessions } from './registry.js';
import { nameParties, namesFile } from './names.js';
import { fileStamp } from '../store/atomic.js';
import type { Peer } from './peer.js';

export type { Peer } from './peer.js';


interface RosterSources {
  root: string;
  sessionsDir: string;
  now: number;
  procInfo(pid: number): ProcInfo | null;
}

/** Session records whose process is running with the recorded start time. */
function liveSessionRecords(sessionsDir: string, procInfo: (pid: number) => ProcInfo | null): SessionRecord[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir);
  } catch {
    return [];
  }
  const out: SessionRecord[] = [];
  for (const n of names) {
    const m = /^(\d+)\.json$/.exec(n);
    if (!m) continue;
    const pid = Number(m[1]);
    const rec = readSessionRecordFile(sessionsDir, pid);
    if (!rec || rec.pid !== pid) continue;
    if (!processAlive(pid, rec.procStart, procInfo)) continue;
    out.push(rec);
  }
  return out;
}

const NO_DELIVERY: Delivery = { sensor: null, drain: null, chat: null, delivering: false };

/**
 * A sensor, a chat or a session heartbeat belongs to a running process: once that process is
 * gone (a crash, a SIGKILL) its last beat must not keep anyone live or "delivering" for the
 * rest of the 90 s. A drain's record is a point in time, so it has no process to check.
 */
const LONG_LIVED_ROLES = new Set(['sensor', 'deliverer', 'chat', 'web', 'session']);

function presenceAlive(p: PresenceRecord, procInfo: (pid: number) => ProcInfo | null): boolean {
  if (p.pid === undefined || !LONG_LIVED_ROLES.has(p.role ?? '')) return true;
  return processAlive(p.pid, undefined, procInfo);
}

export function listLive(src: RosterSources): Peer[] {
  const byId = new Map<string, Peer>();
  const records = readPresence(src.root).filter((p) => presenceAlive(p, src.procInfo));
  for (const rec of liveSessionRecords(src.sessionsDir, src.procInfo)) {
    byId.set(rec.sessionId, {
      id: rec.sessionId,
      kind: 'agent',
      origin: normalizeOrigin(rec.cwd ?? '/'),
      name: '',
      record: rec,
      presence: [],
      lastSeen: rec.updatedAt ?? src.now,
      delivery: NO_DELIVERY,
    });
  }
  for (const p of records) {
    if (!isFresh(p, src.now)) continue;
    const existing = byId.get(p.id);
    if (existing) {
      existing.presence.push(p);
      existing.lastSeen = Math.max(existing.lastSeen, p.heartbeat);
      continue;
    }
    byId.set(p.id, { id: p.id, kind: p.kind, origin: p.origin, name: '', presence: [p], lastSeen: p.heartbeat, delivery: NO_DELIVERY });
  }
  const peers = [...byId.values()];
  for (const p of peers) p.delivery = deliveryOf(records, p.id, src.now);
  const slots = registerAgents(src.root, peers, src.now);
  // Names are given once and kept (tools/bus/presence/names.ts); they outlive their parties
  // in history (issue #10 item 16) and the parties stay addressable once gone (issue 21 item
  // 1). Written only when one changed, and only on a bus that exists (a fresh `attend whoami`
  // must not create it).
  const named = nameParties(
    src.root,
    peers.map((p) => ({ id: p.id, kind: p.kind, name: p.kind === 'human' ? p.id : (p.record?.name ?? ''), origin: p.origin, formerly: slots.get(p.id)?.formerly })),
    src.now,
    { write: existsSync(src.root) },
  );
  for (const p of peers) {
    const n = named.get(p.id);
    p.name = n?.name ?? p.id;
    if (n !== undefined && n.aliases.length > 0) p.aliases = n.aliases;
  }
  return peers.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Give every live agent its registry entry (which follows a `/clear` to the new id). The registry lives on the bus, so it is written
 * only when the root already exists (a fresh `attend whoami` must not create it) and a
 * failure falls back to start order: names are presentation, never worth failing a command.
 */
function registerAgents(root: string, peers: Peer[], now: number): Map<string, Observed> {
  const obs: Observation[] = peers
    .filter((p) => p.kind === 'agent')
    .map((p) => ({ sessionId: p.id, origin: p.origin, pid: p.record?.pid, procStart: p.record?.procStart, startedAt: p.record?.startedAt }));
  if (obs.length === 0 || !existsSync(root)) return new Map();
  try {
    return observeSessions(root, obs, now);
  } catch {
    return new Map();
  }
}

/**
 * Display names for a long-running reader (the sensor, the channel push) without a roster
 * rebuild per message (issue #12 §3): names depend on the session records, the registry and
 * the names file,
 * so the map is rebuilt only when the sessions directory or the registry changed (or about a
 * minute passed, for a record rewritten in place). With N sessions each receiving a
 * broadcast, that is O(1) per sensor per message instead of O(N).
 */
export function createNameSource(src: Omit<RosterSources, 'now'>, now: () => number): () => Map<string, string> {
  let cache: { stamp: string; at: number; map: Map<string, string> } | undefined;
  const stampOf = (): string => `${fileStamp(src.sessionsDir)}|${fileStamp(join(src.root, 'state', 'registry.json'))}|${fileStamp(namesFile(src.root))}`;
  // The refresh for a record rewritten in place comes at a different moment in each
  // process: sensors started together must not all rebuild the roster on the same broadcast.
  const refreshMs = 45_000 + Math.floor(Math.random() * 30_000);
  const rebuild = (t: number) => {
    const peers = listLive({ ...src, now: t });
    // The registry may have been written by this very listing: stamp after it.
    cache = { stamp: stampOf(), at: t, map: new Map(peers.map((p) => [p.id, p.name])) };
  };
  let pending: NodeJS.Timeout | undefined;
  return () => {
    const t = now();
    if (!cache) {
      rebuild(t);
      return cache!.map;
    }
    const stamp = stampOf();
    if ((cache.stamp !== stamp || t - cache.at > refreshMs) && !pending) {
      // Stale while it is rebuilt: with N sessions a rebuild reads N records, and a change to
      // the roster (a session started) makes every reader's map stale at once. Rebuilding on
      // the next message meant N rebuilds on one broadcast's fan-out; instead each reader
      // answers from the map it has and rebuilds a moment later, at its own random moment.
      // A sender new since then reads by its last known name (tools/bus/presence/names.ts).
      pending = setTimeout(() => {
        pending = undefined;
        try {
          rebuild(now());
        } catch {
          // names are presentation: the old map stays
        }
      }, Math.floor(Math.random() * 1_000));
      pending.unref?.();
    }
    return cache.map;
  };
}
