// Presence: attend's own heartbeats, beside Claude Code's session records. A human in
// `attend chat` and a running sensor write one file each under state/presence/.

import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';

export const HEARTBEAT_FRESH_MS = 90_000;
/** A drain this recent still counts as delivering to its session (issue #3 §6). */
const DRAIN_RECENT_MS = 10 * 60_000;

type PresenceRole = 'sensor' | 'deliverer' | 'drain' | 'session' | 'chat' | 'web' | 'cli';

export interface PresenceRecord {
  id: string;
  kind: 'agent' | 'human';
  origin: string;
  /** ms since the epoch of the last beat. */
  heartbeat: number;
  pid?: number;
  /**
   * What keeps the beat: 'sensor' (a running `attend run`, every ≤ 30 s; 'deliverer', the
   * socket conduit `attend deliver`, the same way), 'drain' (the Stop
   * hook, stamped with the time it ran), 'session' (the SessionStart hook), 'chat' (a human
   * in `attend chat`), 'cli'.
   */
  role?: PresenceRole | string;
  name?: string;
}

export function presenceDir(root: string): string {
  return join(stateDir(root), 'presence');
}

function presenceFile(root: string, id: string, role: string): string {
  return join(presenceDir(root), `${encodeURIComponent(id)}~${role}.json`);
}

/** Not synced: a heartbeat a crash loses is renewed by the next one, or was a dead process's. */
export function writePresence(root: string, rec: PresenceRecord): void {
  writeFileAtomic(presenceFile(root, rec.id, rec.role ?? 'cli'), JSON.stringify(rec), { sync: false });
}

export function removePresence(root: string, id: string, role: string): void {
  try {
    unlinkSync(presenceFile(root, id, role));
  } catch {
    // already gone
  }
}

/** One presence file, or null when it is missing, torn or not a presence. */
function readPresenceFile(path: string): PresenceRecord | null {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Partial<PresenceRecord>;
    if (typeof o.id === 'string' && (o.kind === 'agent' || o.kind === 'human') && typeof o.origin === 'string' && typeof o.heartbeat === 'number') {
      return o as PresenceRecord;
    }
  } catch {
    // a torn or foreign file: not a presence
  }
  return null;
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
    const rec = readPresenceFile(join(presenceDir(root), n));
    if (rec) out.push(rec);
  }
  return out;
}

/**
 * The presence `id` keeps in `role`, fresh or not, or null: one file, where readPresence lists
 * them all (a check about one party, as doctor's, does not grow with the live).
 */
export function readPresenceOf(root: string, id: string, role: PresenceRole): PresenceRecord | null {
  const rec = readPresenceFile(presenceFile(root, id, role));
  return rec && rec.id === id && rec.role === role ? rec : null;
}

export function isFresh(rec: PresenceRecord, now: number): boolean {
  return now - rec.heartbeat <= HEARTBEAT_FRESH_MS;
}

export interface Delivery {
  /** Newest sensor heartbeat (ms), fresh or not. */
  sensor: number | null;
  /** Newest drain (ms). */
  drain: number | null;
  /** A chat heartbeat (humans). */
  chat: number | null;
  /** An `attend web` heartbeat (humans: tools/web/). */
  web?: number | null;
  /** Newest deliverer heartbeat (ms), counted in `sensor` too: which live conduit it is. */
  deliverer?: number | null;
  /** The SessionStart hook's record: the plugin's hooks run for this session, its Stop hook among them. */
  hook?: number | null;
  /** Something delivers: a fresh sensor heartbeat, a drain in the last 10 minutes, or a fresh chat. */
  delivering: boolean;
}

/** What delivers to `id`, from every presence record it has (fresh or not). */
export function deliveryOf(records: PresenceRecord[], id: string, now: number): Delivery {
  let sensor: number | null = null;
  let drain: number | null = null;
  let chat: number | null = null;
  let web: number | null = null;
  let hook: number | null = null;
  let deliverer: number | null = null;
  for (const r of records) {
    if (r.id !== id) continue;
    // The deliverer is a live conduit as the sensor is (issue 21 §2).
    if (r.role === 'sensor' || r.role === 'deliverer') sensor = Math.max(sensor ?? 0, r.heartbeat);
    if (r.role === 'deliverer') deliverer = Math.max(deliverer ?? 0, r.heartbeat);
    else if (r.role === 'drain') drain = Math.max(drain ?? 0, r.heartbeat);
    else if (r.role === 'chat') chat = Math.max(chat ?? 0, r.heartbeat);
    else if (r.role === 'web') web = Math.max(web ?? 0, r.heartbeat);
    else if (r.role === 'session') hook = Math.max(hook ?? 0, r.heartbeat);
  }
  const delivering =
    (sensor !== null && now - sensor <= HEARTBEAT_FRESH_MS) || (drain !== null && now - drain <= DRAIN_RECENT_MS) || (chat !== null && now - chat <= HEARTBEAT_FRESH_MS) ||
    (web !== null && now - web <= HEARTBEAT_FRESH_MS);
  return { sensor, drain, chat, ...(web !== null ? { web } : {}), hook, deliverer, delivering };
}
