// Where a party's focus is kept (issue 23 §3): one small file per party under
// state/focus/, written only by the party itself (`attend focus`), so two parties never race
// for one file. The sensor reads its own on every wake: one stat while nothing changed.

import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Focus, inFocus } from '../../wire/attention.js';
import { fileStamp, readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { ensureDir } from '../store/root.js';

function focusDir(root: string): string {
  return join(stateDir(root), 'focus');
}

function focusFile(root: string, id: string): string {
  return join(focusDir(root), `${encodeURIComponent(id)}.json`);
}

function parseFocus(text: string | null): Focus | null {
  if (text === null) return null;
  try {
    const o = JSON.parse(text) as Partial<Focus> | null;
    return o && Number.isFinite(o.since) && Number.isFinite(o.until) ? { since: o.since as number, until: o.until as number } : null;
  } catch {
    return null;
  }
}

// Per file: the last stamp read and what it said, so a wake costs a stat, not a read.
const cache = new Map<string, { stamp: string; focus: Focus | null }>();

/** The party's focus, or null when it has none (or it has ended). */
export function readFocus(root: string, id: string, now: number): Focus | null {
  const path = focusFile(root, id);
  const stamp = fileStamp(path);
  let hit = cache.get(path);
  if (hit?.stamp !== stamp) {
    hit = { stamp, focus: stamp === '-' ? null : parseFocus(readTextIfAny(path)) };
    cache.set(path, hit);
  }
  return inFocus(hit.focus, now) ? hit.focus : null;
}

/** Every party in focus now, by id. */
export function readFocusAll(root: string, now: number): Map<string, Focus> {
  const out = new Map<string, Focus>();
  let names: string[];
  try {
    names = readdirSync(focusDir(root));
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    let id: string;
    try {
      id = decodeURIComponent(name.slice(0, -'.json'.length));
    } catch {
      continue;
    }
    const f = readFocus(root, id, now);
    if (f) out.set(id, f);
  }
  return out;
}

/** Set (or with null, end) the party's focus. */
export function writeFocus(root: string, id: string, focus: Focus | null): void {
  const path = focusFile(root, id);
  if (focus === null) {
    rmSync(path, { force: true });
    return;
  }
  ensureDir(focusDir(root));
  writeFileAtomic(path, `${JSON.stringify(focus)}\n`);
}
