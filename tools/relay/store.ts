// The relay's own files under the bus root (beside tools/bus/presence/remote.ts's):
//
//   relay/config.json      settings (tools/relay/config.ts)
//   relay/cursor.json      outbound: per directory, the newest local message published
//   relay/imported.log     inbound: every message written from the hub (the loop guard)
//   relay/parked/*.json    remote messages refused, with the reason (never in a tray)
//   relay/status.json      what `attend relay status` shows, rewritten while running

import { closeSync, openSync, readFileSync, readdirSync, writeSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { writeAll, writeFileAtomic, writeFilesAtomic } from '../bus/store/index.js';
import { FILE_MODE, ensureDir } from '../bus/store/index.js';
import { importedLog, readImported, relayStateDir } from '../bus/presence/index.js';
import type { HubView } from './hub.js';

function parkedDir(root: string): string {
  return join(relayStateDir(root), 'parked');
}

export function statusFile(root: string): string {
  return join(relayStateDir(root), 'status.json');
}

function cursorFile(root: string): string {
  return join(relayStateDir(root), 'cursor.json');
}

export interface Cursor {
  /** When this bus first ran a relay: older local messages are published only by resync. */
  since: number;
  /** Per directory name: creation time (ms) of the newest message published. */
  dirs: Record<string, number>;
  /** The hub's stream as last seen (its creation stamp): another one means the hub lost its store. */
  hubStream?: string;
}

export function readCursor(root: string): Cursor | null {
  try {
    const v = JSON.parse(readFileSync(cursorFile(root), 'utf8')) as Cursor;
    if (typeof v.since === 'number' && typeof v.dirs === 'object' && v.dirs !== null) return v;
  } catch {
    // first run
  }
  return null;
}

export function writeCursor(root: string, c: Cursor): void {
  ensureDir(relayStateDir(root));
  writeFileAtomic(cursorFile(root), `${JSON.stringify(c)}\n`);
}

/** The same, synced off the event loop (during a burst the disk is busy with the messages). */
export async function writeCursorAsync(root: string, c: Cursor): Promise<void> {
  ensureDir(relayStateDir(root));
  await writeFilesAtomic([{ path: cursorFile(root), data: `${JSON.stringify(c)}\n` }]);
}

/** The loop guard: imported messages, in memory and appended to imported.log. */
export class ImportedSet {
  private readonly set: Set<string>;
  constructor(private readonly root: string) {
    this.set = readImported(root);
  }
  has(dir: string, id: string): boolean {
    return this.set.has(`${dir}/${id}`);
  }
  /** Recorded before the file is renamed into place, so the outbound side never sees it unmarked. */
  private fd: number | null = null;
  add(dir: string, id: string): void {
    if (this.set.has(`${dir}/${id}`)) return;
    // One descriptor kept open (O_APPEND: each line is one write); reopened if it fails.
    if (this.fd === null) {
      ensureDir(relayStateDir(this.root));
      this.fd = openSync(importedLog(this.root), fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT, FILE_MODE);
    }
    try {
      writeSync(this.fd, `${dir} ${id}\n`);
    } catch (err) {
      this.close();
      throw err;
    }
    this.set.add(`${dir}/${id}`);
  }
  /** Several at once, in one append (a batch of imports). */
  addMany(entries: [dir: string, id: string][]): void {
    const fresh = entries.filter(([dir, id]) => !this.set.has(`${dir}/${id}`));
    if (fresh.length === 0) return;
    if (this.fd === null) {
      ensureDir(relayStateDir(this.root));
      this.fd = openSync(importedLog(this.root), fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT, FILE_MODE);
    }
    try {
      writeAll(this.fd, Buffer.from(fresh.map(([dir, id]) => `${dir} ${id}\n`).join('')));
    } catch (err) {
      this.close();
      throw err;
    }
    for (const [dir, id] of fresh) this.set.add(`${dir}/${id}`);
  }
  close(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
  }
  get size(): number {
    return this.set.size;
  }
}

export interface Parked {
  at: number;
  reason: string;
  kind: 'reject' | 'conflict' | 'outbound';
  subject?: string;
  id?: string;
  origin?: string;
  /** The payload as text when it is UTF-8, else base64 in `base64`. */
  text?: string;
  base64?: string;
}

let parkSeq = 0;

/** Keep a refused message with its reason; it is never written where a session reads. */
export function park(root: string, p: Omit<Parked, 'text' | 'base64'>, data?: Uint8Array): string {
  const dir = parkedDir(root);
  ensureDir(dir);
  const rec: Parked = { ...p };
  if (data) {
    try {
      rec.text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    } catch {
      rec.base64 = Buffer.from(data).toString('base64');
    }
  }
  const name = `${p.at.toString(36).padStart(9, '0')}-${process.pid.toString(36)}-${(++parkSeq).toString(36)}-${p.kind}.json`;
  writeFileAtomic(join(dir, name), `${JSON.stringify(rec)}\n`);
  return join(dir, name);
}

export function listParked(root: string): Parked[] {
  let names: string[];
  try {
    names = readdirSync(parkedDir(root)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
  } catch {
    return [];
  }
  const out: Parked[] = [];
  for (const n of names) {
    try {
      out.push(JSON.parse(readFileSync(join(parkedDir(root), n), 'utf8')) as Parked);
    } catch {
      // torn by hand: skip
    }
  }
  return out;
}

export interface RelayStatus {
  pid: number;
  host: string;
  hub: string;
  connected: boolean;
  /** The stream and this host's consumers exist: traffic flows both ways. */
  ready?: boolean;
  startedAt: number;
  updatedAt: number;
  lastContact: number | null;
  /** Local messages found and not yet acknowledged by the hub. */
  outboundBacklog: number;
  /** When the oldest of them was found (ms), or null when none waits. */
  outboundSince?: number | null;
  /** What the last check of the hub found: cluster, replicas, leader, a problem (hub.ts HubView). */
  hubView?: HubView;
  /** Stream messages for this host not yet imported (the consumers' pending counts). */
  inboundBacklog: number | null;
  published: number;
  imported: number;
  duplicates: number;
  parked: number;
  lastError?: string;
}

export function writeStatus(root: string, s: RelayStatus): void {
  ensureDir(relayStateDir(root));
  // A report rewritten twice a second: not synced (a torn one after a crash reads as none).
  writeFileAtomic(statusFile(root), `${JSON.stringify(s)}\n`, { sync: false });
}

export function readStatus(root: string): RelayStatus | null {
  try {
    return JSON.parse(readFileSync(statusFile(root), 'utf8')) as RelayStatus;
  } catch {
    return null;
  }
}
