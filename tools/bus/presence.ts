// Presence: attend's own heartbeats, beside Claude Code's session records. A human in
// `attend chat` and a running sensor write one file each under state/presence/.

import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { stateDir } from './layout.js';

export const HEARTBEAT_FRESH_MS = 90_000;

export interface PresenceRecord {
  id: string;
  kind: 'agent' | 'human';
  origin: string;
  /** ms since the epoch of the last beat. */
  heartbeat: number;
  pid?: number;
  /** What keeps the beat: 'chat', 'sensor', 'session' (the SessionStart hook), 'cli'. */
  role?: string;
  name?: string;
}

export function presenceDir(root: string): string {
  return join(stateDir(root), 'presence');
}

function presenceFile(root: string, id: string, role: string): string {
  return join(presenceDir(root), `${encodeURIComponent(id)}~${role}.json`);
}

export function writePresence(root: string, rec: PresenceRecord): void {
  writeFileAtomic(presenceFile(root, rec.id, rec.role ?? 'cli'), JSON.stringify(rec));
}

export function removePresence(root: string, id: string, role: string): void {
  try {
    unlinkSync(presenceFile(root, id, role));
  } catch {
    // already gone
  }
}

export function readPresence(root: string): PresenceRecord[] {
  let names: string[];
  try {
    names = readdirSync(presenceDir(root));
  } catch {
    return [];
  }
  const out: PresenceRecord[] = [];
  for (const n of names) {
    if (!n.endsWith('.json') || n.startsWith('.')) continue;
    try {
      const o = JSON.parse(readFileSync(join(presenceDir(root), n), 'utf8')) as Partial<PresenceRecord>;
      if (typeof o.id === 'string' && (o.kind === 'agent' || o.kind === 'human') && typeof o.origin === 'string' && typeof o.heartbeat === 'number') {
        out.push(o as PresenceRecord);
      }
    } catch {
      // a torn or foreign file: not a presence
    }
  }
  return out;
}

export function isFresh(rec: PresenceRecord, now: number): boolean {
  return now - rec.heartbeat <= HEARTBEAT_FRESH_MS;
}
