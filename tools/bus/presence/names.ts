// Every party the bus has known (issue #10 item 16, issue 21 item 1): its last known display
// name, so an ended session reads `api (gone)` in history rather than `1a2b3c4d…`, and where
// it reads (its kind, origin, host), so it can still be left a message. Display names are
// presentation only (spec §4); the origin is what a message to a party that is not live is
// routed by (tools/bus/presence/known.ts).
//
//   <root>/state/names.json   { "v": 1, "names": { "<id>": { "name": "api", "at": <ms>,
//                                "kind": "agent", "origin": "/srv/api", "seen": <ms> } } }
//
// Recorded from the live roster (listLive, every party it lists) and from every message
// attend writes (the sender: a declared agent or a person who only ever sent is never in the
// roster), so "has ever sent" needs no scan of history. Written only when a party is new, its
// name or origin changed, or its `seen` is more than SEEN_REFRESH_MS old, so reading the bus
// does not rewrite unchanged state; read-modify-write happens under a lock, so two processes
// never drop each other's entry. Humans and parties known only by their id are kept for
// routing but have no name to show (they are shown by their id, as before).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileStamp, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { withLock } from '../store/lock.js';
import { remoteFile, remoteMembers } from './remote.js';
import type { KnownNames } from '../../wire/display.js';

/** The oldest entries (by last change) go beyond this many. */
const MAX_KNOWN_NAMES = 5000;

/** `seen` is refreshed at most this often, so a busy roster is not a write per read. */
const SEEN_REFRESH_MS = 10 * 60_000;

export interface KnownEntry {
  /** The last display name; the id itself for a party with none (a person, a declared agent). */
  name: string;
  /** ms of the last change. */
  at: number;
  kind?: 'agent' | 'human';
  /** Where it reads: its tray is this origin's attend key. */
  origin?: string;
  /** The machine it lives on, for a party of another machine. */
  host?: string;
  /** ms it was last seen live or sending (to within SEEN_REFRESH_MS). */
  seen?: number;
}

/** A party as recorded: by the roster, or as the sender of a message. */
export interface KnownParty {
  id: string;
  kind: 'agent' | 'human';
  name: string;
  origin: string;
  host?: string | undefined;
}

// Parsed once per change of the file (its stamp), not once per call: a send reads it when it
// records its sender and again when a recipient is not live.
let parsed: { file: string; stamp: string; entries: Record<string, KnownEntry> } | undefined;

export function namesFile(root: string): string {
  return join(stateDir(root), 'names.json');
}

/** The entries as read (callers must not change them: they are the cache's). */
export function readKnownEntries(root: string): Readonly<Record<string, KnownEntry>> {
  const file = namesFile(root);
  const stamp = fileStamp(file);
  if (parsed && parsed.file === file && parsed.stamp === stamp) return parsed.entries;
  const entries = stamp === '-' ? {} : parseEntries(file);
  parsed = { file, stamp, entries };
  return entries;
}

function parseEntries(file: string): Record<string, KnownEntry> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const v = JSON.parse(text) as { names?: unknown };
    if (typeof v.names !== 'object' || v.names === null || Array.isArray(v.names)) return {};
    const out: Record<string, KnownEntry> = {};
    for (const [id, e] of Object.entries(v.names as Record<string, unknown>)) {
      const x = e as Partial<KnownEntry> | null;
      if (!x || typeof x.name !== 'string' || typeof x.at !== 'number') continue;
      const entry: KnownEntry = { name: x.name, at: x.at };
      if (x.kind === 'agent' || x.kind === 'human') entry.kind = x.kind;
      if (typeof x.origin === 'string') entry.origin = x.origin;
      if (typeof x.host === 'string') entry.host = x.host;
      if (typeof x.seen === 'number') entry.seen = x.seen;
      out[id] = entry;
    }
    return out;
  } catch {
    return {};
  }
}

/** A name worth showing: not a person's (shown by id) nor a party's own id. */
function shownName(id: string, e: KnownEntry): boolean {
  return e.kind !== 'human' && e.name !== id && e.name.length > 0;
}

/**
 * id → the last display name it was seen live under; and members live on other machines
 * (issue 13), by the name their machine gives them with its host (`api@box`), marked as
 * live elsewhere (tools/wire/display.ts knownName) rather than gone.
 */
export function readKnownNames(root: string, now = Date.now()): KnownNames & Map<string, string> {
  const map: KnownNames & Map<string, string> = new Map(Object.entries(readKnownEntries(root)).flatMap(([id, e]) => (shownName(id, e) ? [[id, e.name] as const] : [])));
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
 * Remember parties seen live or sending: their names and where they read. Writes only when
 * one is new or changed (or its `seen` is stale); never throws (a name is never worth
 * failing a command for).
 */
export function rememberParties(root: string, parties: Iterable<KnownParty>, now: number): void {
  try {
    const wanted = [...parties].filter((p) => p.id.length > 0);
    if (wanted.length === 0) return;
    if (!wanted.some((p) => needsUpdate(readKnownEntries(root)[p.id], p, now))) return;
    withLock(`${namesFile(root)}.lock`, () => {
      const entries: Record<string, KnownEntry> = { ...readKnownEntries(root) };
      let changed = false;
      for (const p of wanted) {
        const old = entries[p.id];
        if (!needsUpdate(old, p, now)) continue;
        entries[p.id] = merged(old, p, now);
        changed = true;
      }
      if (!changed) return;
      let ids = Object.keys(entries);
      if (ids.length > MAX_KNOWN_NAMES) {
        ids = ids.sort((a, b) => entries[b]!.at - entries[a]!.at).slice(0, MAX_KNOWN_NAMES);
      }
      const names: Record<string, KnownEntry> = {};
      for (const id of ids.sort()) names[id] = entries[id]!;
      writeFileAtomic(namesFile(root), `${JSON.stringify({ v: 1, names })}\n`);
    });
  } catch {
    // a full disk or a lock timeout: the party is remembered next time
  }
}

/** A party with no name of its own (a person, a declared agent seen only as a sender) keeps any name it had. */
function nameOf(old: KnownEntry | undefined, p: KnownParty): string {
  const own = p.name.length > 0 && p.name !== p.id;
  return own || old === undefined ? (p.name.length > 0 ? p.name : p.id) : old.name;
}

function needsUpdate(old: KnownEntry | undefined, p: KnownParty, now: number): boolean {
  if (!old) return true;
  if (old.name !== nameOf(old, p) || old.kind !== p.kind || old.origin !== p.origin || old.host !== p.host) return true;
  return old.seen === undefined || now - old.seen > SEEN_REFRESH_MS;
}

function merged(old: KnownEntry | undefined, p: KnownParty, now: number): KnownEntry {
  const name = nameOf(old, p);
  const changed = !old || old.name !== name || old.origin !== p.origin || old.host !== p.host || old.kind !== p.kind;
  const e: KnownEntry = { name, at: changed ? now : old.at, kind: p.kind, origin: p.origin, seen: now };
  if (p.host !== undefined) e.host = p.host;
  return e;
}
