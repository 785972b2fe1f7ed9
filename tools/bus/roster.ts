// Who is live (spec §4, §5): Claude Code sessions whose record belongs to a running process
// with a matching start time, plus anyone whose attend heartbeat is fresh.

import { readdirSync } from 'node:fs';
import type { ProcInfo, SessionRecord } from '../identity/resolve.js';
import { normalizeOrigin } from '../identity/resolve.js';
import { readSessionRecordFile } from '../identity/system.js';
import { nicknameFor, ordinalName } from '../wire/names.js';
import { isFresh, readPresence, type PresenceRecord } from './presence.js';

export interface Peer {
  id: string;
  kind: 'agent' | 'human';
  origin: string;
  /** Display name, with its ordinal when sessions share an origin. */
  name: string;
  record?: SessionRecord;
  presence: PresenceRecord[];
  lastSeen: number;
}

export interface RosterSources {
  root: string;
  sessionsDir: string;
  now: number;
  procInfo(pid: number): ProcInfo | null;
}

/** Session records whose process is running with the recorded start time. */
export function liveSessionRecords(sessionsDir: string, procInfo: (pid: number) => ProcInfo | null): SessionRecord[] {
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
    const info = procInfo(pid);
    if (!info) continue;
    if (rec.procStart !== undefined && info.start !== '' && rec.procStart !== info.start) continue;
    out.push(rec);
  }
  return out;
}

export function listLive(src: RosterSources): Peer[] {
  const byId = new Map<string, Peer>();
  for (const rec of liveSessionRecords(src.sessionsDir, src.procInfo)) {
    byId.set(rec.sessionId, {
      id: rec.sessionId,
      kind: 'agent',
      origin: normalizeOrigin(rec.cwd ?? '/'),
      name: '',
      record: rec,
      presence: [],
      lastSeen: rec.updatedAt ?? src.now,
    });
  }
  for (const p of readPresence(src.root)) {
    if (!isFresh(p, src.now)) continue;
    const existing = byId.get(p.id);
    if (existing) {
      existing.presence.push(p);
      existing.lastSeen = Math.max(existing.lastSeen, p.heartbeat);
      continue;
    }
    byId.set(p.id, { id: p.id, kind: p.kind, origin: p.origin, name: '', presence: [p], lastSeen: p.heartbeat });
  }
  const peers = [...byId.values()];
  assignNames(peers);
  return peers.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Display names: humans by username; a session by its Claude Code name, else a nickname
 * from its origin; sessions sharing an origin get ordinals in start order.
 */
function assignNames(peers: Peer[]): void {
  const byOrigin = new Map<string, Peer[]>();
  for (const p of peers) {
    if (p.kind === 'human') {
      p.name = p.id;
      continue;
    }
    const list = byOrigin.get(p.origin) ?? [];
    list.push(p);
    byOrigin.set(p.origin, list);
  }
  for (const [origin, list] of byOrigin) {
    list.sort((a, b) => (a.record?.startedAt ?? 0) - (b.record?.startedAt ?? 0) || a.id.localeCompare(b.id));
    list.forEach((p, i) => {
      const base = p.record?.name ?? nicknameFor(origin);
      p.name = list.length > 1 ? `${base}-${ordinalName(i)}` : base;
    });
  }
}
