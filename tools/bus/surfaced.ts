// The newest message shown to an identity, which `attend reply` threads to by default.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { stateDir } from './layout.js';

function surfacedFile(root: string, id: string): string {
  return join(stateDir(root), 'surfaced', `${encodeURIComponent(id)}.json`);
}

export interface Surfaced {
  id: string;
  time: number;
}

export function readSurfaced(root: string, id: string): Surfaced | null {
  try {
    const o = JSON.parse(readFileSync(surfacedFile(root, id), 'utf8')) as Partial<Surfaced>;
    return typeof o.id === 'string' && typeof o.time === 'number' ? { id: o.id, time: o.time } : null;
  } catch {
    return null;
  }
}

/** Record `msg` as surfaced unless something newer already is. */
export function noteSurfaced(root: string, id: string, msg: Surfaced): void {
  const prev = readSurfaced(root, id);
  if (prev && (prev.time > msg.time || (prev.time === msg.time && prev.id >= msg.id))) return;
  writeFileAtomic(surfacedFile(root, id), JSON.stringify(msg));
}
