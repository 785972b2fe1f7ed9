// Every party the bus has known (issue #10 item 16, issue 21 item 1): its last known display
// name, so an ended session reads `api (gone)` in history rather than `1a2b3c4d…`, and where
// it reads (its kind, origin, host), so it can still be left a message. Display names are
// presentation only (spec §4); the origin is what a message to a party that is not live is
// routed by (tools/bus/presence/known.ts).
//
//   <root>/state/names.json   { "v": 2, "names": { "<id>": { "name": "codex-api", "at": <ms>,
//                                "kind": "agent", "origin": "/srv/api", "seen": <ms>,
//                                "base": "codex-api", "since": <ms>, "aliases": ["Abe-alpha"] } } }
//
// The names of this machine's agents are given here (nameParties, the rule in
// tools/wire/names.ts giveNames): once, when a party first appears, unique among the live
// and those seen lately, and kept for its life; every earlier name stays in `aliases` and
// resolves to it (tools/bus/presence/targets.ts). An entry without `since` was written before
// names were given (v1, ordinals): its name becomes an alias when the party is next named.
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
import { type GivenName, giveNames, MAX_ALIASES, nameBase } from '../../wire/names.js';
import { HEARTBEAT_FRESH_MS } from './heartbeats.js';

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
  /** A local agent's given name: what it was made from (its own name, or `<harness>-<project>`). */
  base?: string;
  /** ms the name was given: absent on a name from before names were given (v1). */
  since?: number;
  /** Every earlier name, oldest first: each resolves to this party still. */
  aliases?: string[];
}

/** A party as recorded: by the roster, or as the sender of a message. */
export interface KnownParty {
  id: string;
  kind: 'agent' | 'human';
  /**
   * A person's or another machine's party's name; a local agent's own name (a Claude Code
   * session's, from its record), or '' (or its id) when it has none: attend gives it one.
   */
  name: string;
  /** A session that was `/clear`ed: its id before, whose name it keeps. */
  formerly?: string | undefined;
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
      if (typeof x.base === 'string' && typeof x.since === 'number') {
        entry.base = x.base;
        entry.since = x.since;
      }
      if (Array.isArray(x.aliases)) entry.aliases = x.aliases.filter((a): a is string => typeof a === 'string').slice(-MAX_ALIASES);
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

/** A name given here is held (not given to another) while its party was seen this lately. */
const HELD_MS = SEEN_REFRESH_MS + HEARTBEAT_FRESH_MS;

/** A local agent: its name is given here (a person is named by its username, another machine names its own). */
function namedHere(p: KnownParty): boolean {
  return p.kind === 'agent' && p.host === undefined;
}

function ownName(p: KnownParty): string | undefined {
  return p.name.length > 0 && p.name !== p.id ? p.name : undefined;
}

function givenOf(e: KnownEntry | undefined): GivenName | undefined {
  return e?.since !== undefined && e.base !== undefined ? { name: e.name, base: e.base, since: e.since, aliases: e.aliases ?? [] } : undefined;
}

/** What a party was called before: its own entry, or (a `/clear`) the one of the id it had. */
function previousOf(entries: Readonly<Record<string, KnownEntry>>, p: KnownParty): KnownEntry | undefined {
  return entries[p.id] ?? (p.formerly !== undefined ? entries[p.formerly] : undefined);
}

export interface PartyName {
  name: string;
  aliases: string[];
}

/**
 * The names of these parties (the live roster's, or a sender), given where a local agent has
 * none yet (or its own name changed), and recorded with where each reads. Writes only when
 * a name is new or a party new or changed (or its `seen` is stale), under the file's lock,
 * deciding again on what the file holds then, so processes racing never give one name twice
 * or drop each other's entry. With `write` false (a bus not made yet) the names are given
 * and nothing is written. Never throws: a full disk or a lock timeout gives the names
 * without recording them (they are recorded next time).
 */
export function nameParties(root: string, parties: Iterable<KnownParty>, now: number, opts: { write?: boolean } = {}): Map<string, PartyName> {
  const wanted = [...parties].filter((p) => p.id.length > 0);
  if (wanted.length === 0) return new Map();
  const first = decide(readKnownEntries(root), wanted, now);
  if (!first.write || opts.write === false) return first.names;
  try {
    return withLock(`${namesFile(root)}.lock`, () => {
      const entries: Record<string, KnownEntry> = { ...readKnownEntries(root) };
      const d = decide(entries, wanted, now);
      if (!d.write) return d.names;
      for (const [id, e] of d.updates) entries[id] = e;
      let ids = Object.keys(entries);
      if (ids.length > MAX_KNOWN_NAMES) {
        ids = ids.sort((a, b) => entries[b]!.at - entries[a]!.at).slice(0, MAX_KNOWN_NAMES);
      }
      const names: Record<string, KnownEntry> = {};
      for (const id of ids.sort()) names[id] = entries[id]!;
      writeFileAtomic(namesFile(root), `${JSON.stringify({ v: 2, names })}\n`);
      return d.names;
    });
  } catch {
    return first.names;
  }
}

/** Remember parties seen live or sending: nameParties, for callers that want no names back. */
export function rememberParties(root: string, parties: Iterable<KnownParty>, now: number): void {
  nameParties(root, parties, now);
}

/**
 * The names, and the entries to write. The fast path (every local agent keeps its name and
 * nothing is stale) looks at the parties' own entries only; the names held by everyone else
 * are gathered only when a name must be given, so a pass costs what its parties do, not what
 * the file holds.
 */
function decide(entries: Readonly<Record<string, KnownEntry>>, parties: KnownParty[], now: number): { names: Map<string, PartyName>; updates: Map<string, KnownEntry>; write: boolean } {
  const local = parties.filter(namedHere);
  const requests = local.map((p) => {
    const before = previousOf(entries, p);
    const legacy = before !== undefined && before.since === undefined && before.name !== p.id && before.name.length > 0 ? before.name : undefined;
    return { id: p.id, base: nameBase({ id: p.id, origin: p.origin, own: ownName(p) }), had: givenOf(before), legacy };
  });
  let held: (lower: string) => Iterable<string> = () => [];
  // Two live parties that keep one name: one came back after it was given to the other.
  const keptNames = requests.filter((r) => r.had !== undefined && r.had.base === r.base).map((r) => r.had!.name.toLowerCase());
  const clash = new Set(keptNames).size < keptNames.length;
  const needsGiving = clash || requests.some((r) => r.had === undefined || r.had.base !== r.base);
  if (needsGiving) {
    const index = new Map<string, string[]>();
    const hold = (k: string, id: string) => index.set(k, [...(index.get(k) ?? []), id]);
    for (const [id, e] of Object.entries(entries)) {
      if (now - (e.seen ?? e.at) > HELD_MS) continue;
      for (const n of [e.name, ...(e.aliases ?? [])]) hold(n.toLowerCase(), id);
    }
    // A person and another machine's party hold their names too: an agent is never called by a username.
    for (const p of parties) if (!namedHere(p)) hold((p.name || p.id).toLowerCase(), p.id);
    held = (k) => index.get(k) ?? [];
  }
  const given = needsGiving ? giveNames(requests, held, now) : new Map(requests.map((r) => [r.id, { given: r.had!, changed: false }]));
  const names = new Map<string, PartyName>();
  const updates = new Map<string, KnownEntry>();
  for (const p of parties) {
    const old = entries[p.id];
    const g = given.get(p.id)?.given;
    const name = g?.name ?? nameOf(old, p);
    names.set(p.id, { name, aliases: g?.aliases ?? old?.aliases ?? [] });
    const changed = !old || old.name !== name || old.kind !== p.kind || old.origin !== p.origin || old.host !== p.host || (g !== undefined && (old.since !== g.since || old.base !== g.base));
    if (!changed && old.seen !== undefined && now - old.seen <= SEEN_REFRESH_MS) continue;
    const e: KnownEntry = { name, at: changed ? now : old!.at, kind: p.kind, origin: p.origin, seen: now };
    if (p.host !== undefined) e.host = p.host;
    if (g !== undefined) {
      e.base = g.base;
      e.since = g.since;
      if (g.aliases.length > 0) e.aliases = g.aliases;
    } else if (old?.aliases !== undefined) e.aliases = old.aliases;
    updates.set(p.id, e);
  }
  return { names, updates, write: updates.size > 0 };
}

/** A party with no name of its own (a person, a declared agent seen only as a sender) keeps any name it had. */
function nameOf(old: KnownEntry | undefined, p: KnownParty): string {
  const own = p.name.length > 0 && p.name !== p.id;
  return own || old === undefined ? (p.name.length > 0 ? p.name : p.id) : old.name;
}
