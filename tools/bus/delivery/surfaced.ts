// The newest message shown to an identity, which `attend reply` threads to by default.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { readLedger } from './ledger.js';

function surfacedFile(root: string, id: string): string {
  return join(stateDir(root), 'surfaced', `${encodeURIComponent(id)}.json`);
}

export interface Surfaced {
  id: string;
  time: number;
}

/**
 * The newest message shown to `id`: what a listing marked here, or what a conduit (sensor,
 * drain, channel push) recorded in the delivery ledger, whichever is newer.
 */
export function readSurfaced(root: string, id: string): Surfaced | null {
  const listed = readListed(root, id);
  const l = readLedger(root, id);
  const delivered = l.state === 'ok' ? (l.ledger.shown ?? null) : null;
  if (!listed) return delivered;
  if (!delivered) return listed;
  return newer(delivered, listed) ? delivered : listed;
}

function newer(a: Surfaced, b: Surfaced): boolean {
  return a.time > b.time || (a.time === b.time && a.id > b.id);
}

function readListed(root: string, id: string): Surfaced | null {
  try {
    const o = JSON.parse(readFileSync(surfacedFile(root, id), 'utf8')) as Partial<Surfaced>;
    return typeof o.id === 'string' && typeof o.time === 'number' ? { id: o.id, time: o.time } : null;
  } catch {
    return null;
  }
}

/**
 * Record `msg` as shown by a listing (inbox, read) unless something newer already is. Not
 * synced: a crash that loses it only changes which message a bare `attend reply` answers.
 */
export function noteSurfaced(root: string, id: string, msg: Surfaced): void {
  const prev = readSurfaced(root, id);
  if (prev && !newer(msg, prev)) return;
  writeFileAtomic(surfacedFile(root, id), JSON.stringify(msg), { sync: false });
}
