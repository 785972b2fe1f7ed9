// The last known display name of every party seen live (issue #10 item 16): once a session
// ends its id would otherwise show as a raw `1a2b3c4d…` in history. Display names are
// presentation only (spec §4), so this file never decides routing.
//
//   <root>/state/names.json   { "v": 1, "names": { "<id>": { "name": "api", "at": <ms> } } }
//
// Written only when a name is new or changed, so reading the bus never rewrites unchanged
// state; read-modify-write happens under a lock, so two processes never drop each other's
// entry. Humans are shown by their id already and are not stored.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileStamp, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { withLock } from '../store/lock.js';
import { remoteFile, remoteMembers } from './remote.js';
import type { KnownNames } from '../../wire/display.js';

/** The oldest entries (by last change) go beyond this many. */
const MAX_KNOWN_NAMES = 5000;

interface Entry {
  name: string;
  at: number;
}

export function namesFile(root: string): string {
  return join(stateDir(root), 'names.json');
}

function readEntries(root: string): Record<string, Entry> {
  let text: string;
  try {
    text = readFileSync(namesFile(root), 'utf8');
  } catch {
    return {};
  }
  try {
    const v = JSON.parse(text) as { names?: unknown };
    if (typeof v.names !== 'object' || v.names === null || Array.isArray(v.names)) return {};
    const out: Record<string, Entry> = {};
    for (const [id, e] of Object.entries(v.names as Record<string, unknown>)) {
      const x = e as Partial<Entry> | null;
      if (x && typeof x.name === 'string' && typeof x.at === 'number') out[id] = { name: x.name, at: x.at };
    }
    return out;
  } catch {
    return {};
  }
}

/**
 * id → the last display name it was seen live under; and members live on other machines
 * (issue 13), by the name their machine gives them with its host (`api@box`), marked as
 * live elsewhere (tools/wire/display.ts knownName) rather than gone.
 */
export function readKnownNames(root: string, now = Date.now()): KnownNames & Map<string, string> {
  const map: KnownNames & Map<string, string> = new Map(Object.entries(readEntries(root)).map(([id, e]) => [id, e.name]));
  const remote = remoteMembers(root, now);
  if (remote.length > 0) {
    const elsewhere = new Set<string>();
    for (const m of remote) {
      map.set(m.id, `${m.name}@${m.host}`);
      elsewhere.add(m.id);
    }
    map.elsewhere = elsewhere;
  }
  return map;
}

/**
 * The known names, re-read only when the file changed (its mtime, size and inode): for the
 * sensor and the channel push, which look names up on every wake.
 */
export function knownNamesSource(root: string): () => Map<string, string> {
  let cache: { stamp: string; at: number; map: Map<string, string> } | undefined;
  return () => {
    const parts = [fileStamp(namesFile(root)), fileStamp(remoteFile(root))];
    const stamp = parts.join('|');
    // Members elsewhere age out on the clock, not only when a file changes.
    const now = Date.now();
    if (!cache || cache.stamp !== stamp || (parts[1] !== '-' && now - cache.at > 5_000)) cache = { stamp, at: now, map: stamp === '-|-' ? new Map() : readKnownNames(root, now) };
    return cache.map;
  };
}

/**
 * Remember the names of parties seen live. Writes only when one is new or changed; never
 * throws (a name is never worth failing a command for).
 */
export function rememberNames(root: string, peers: Iterable<{ id: string; name: string; kind: string }>, now: number): void {
  try {
    const wanted = [...peers].filter((p) => p.kind !== 'human' && p.name.length > 0 && p.name !== p.id);
    if (wanted.length === 0) return;
    const current = readEntries(root);
    if (wanted.every((p) => current[p.id]?.name === p.name)) return;
    withLock(`${namesFile(root)}.lock`, () => {
      const entries = readEntries(root);
      let changed = false;
      for (const p of wanted) {
        if (entries[p.id]?.name === p.name) continue;
        entries[p.id] = { name: p.name, at: now };
        changed = true;
      }
      if (!changed) return;
      let ids = Object.keys(entries);
      if (ids.length > MAX_KNOWN_NAMES) {
        ids = ids.sort((a, b) => entries[b]!.at - entries[a]!.at).slice(0, MAX_KNOWN_NAMES);
      }
      const names: Record<string, Entry> = {};
      for (const id of ids.sort()) names[id] = entries[id]!;
      writeFileAtomic(namesFile(root), `${JSON.stringify({ v: 1, names })}\n`);
    });
  } catch {
    // a full disk or a lock timeout: the name is remembered next time
  }
}
