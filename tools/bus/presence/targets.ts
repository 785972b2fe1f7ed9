// `--to` resolution (docs/architecture.md, "Identity": display names resolve back to ids at every input boundary).
// A target is an origin path, a session id, a display name or a human username. It names
// someone live, else (for a caller that passes `known`, the send) a party the bus has known
// (issue 21 item 1: tools/bus/presence/known.ts): a name a live and a gone party share is the
// live one's, two gone ones are ambiguous, and an unknown name fails with the closest known.

import { isAbsolute, resolve } from 'node:path';
import { normalizeOrigin } from '../../identity/resolve.js';
import { editDistance, printable } from '../../wire/names.js';
import { neutralize } from '../../wire/render.js';
import { notFoundError, usageError } from '../../wire/errors.js';
import type { Peer } from './roster.js';

function looksLikePath(t: string): boolean {
  return isAbsolute(t) || t.startsWith('./') || t.startsWith('../') || t === '.' || t === '..' || t.startsWith('~/');
}

/** `name`, or `host:name` for a member on another machine. */
function qualifiedName(p: Peer): string {
  return p.host !== undefined ? `${p.host}:${p.name}` : p.name;
}

function describeLive(peers: Peer[]): string {
  if (peers.length === 0) return 'nobody is live on this bus';
  // Names and paths come from session records and heartbeats other processes wrote: data.
  return `live: ${peers.map((p) => neutralize(p.kind === 'human' ? `${qualifiedName(p)} (human)` : `${qualifiedName(p)} (${p.id.slice(0, 8)}…, ${p.origin})`)).join(', ')}`;
}

/** Several members answer to one name or path: name each so the caller can pick one. */
function ambiguousError(t: string, found: Peer[], localHost: string | null): Error {
  const anyRemote = found.some((p) => p.host !== undefined);
  const label = (p: Peer) => (anyRemote ? `${p.host ?? localHost ?? 'local'}:${p.name}` : p.name);
  return usageError(
    `'${printable(t)}' is ambiguous: ${found.map((p) => neutralize(`${label(p)} (${p.kind}, ${p.id})`)).join(', ')}`,
    anyRemote ? 'qualify it with the host (host:name), or name a session by its id' : 'name a session by its id or path, a person as human:<username>',
  );
}

const QUALIFIED = /^([a-z0-9-]{1,32}):(.+)$/;

export interface TargetOptions {
  cwd: string;
  home: string;
  self?: string;
  localHost?: string | null;
  /** Parties that are not live, in tiers read in turn only while a target names nobody. */
  known?: (() => Peer[])[];
  /**
   * Also take a unique prefix of a live name (`codex` for codex-api when it is alone), after
   * every exact match failed. The chat asks for it: its destination line shows whom a draft
   * names before Enter, where a script's `--to` would send to a guess unseen.
   */
  namePrefix?: boolean;
}

/** What a target names: the parties, or why none (each front end words it in its own terms). */
export type TargetLookup =
  | { ok: true; peers: Peer[] }
  | { ok: false; problem: 'invalid'; reason: string }
  | { ok: false; problem: 'ambiguous'; candidates: Peer[] }
  | {
      ok: false;
      problem: 'unknown';
      /** `human:<username>` asked for a person. */
      human: boolean;
      /** The path a path-like target meant, else null. */
      path: string | null;
      /** The known names nearest it, closest first (at most 5). */
      closest: Peer[];
      /** Whether parties that are not live were looked among (`known` was given). */
      known: boolean;
    };

/** Everyone a target may name, and how to look: what the send resolves against (tools/verbs/address.ts). */
export interface AddressBook {
  /** Live here and on every machine the relay hears from. */
  peers: Peer[];
  opts: TargetOptions;
}

/**
 * Resolve one target to the peers it names: live ones first, else known ones when `known`
 * is given. Throws AttendError when it names none, or several of the same standing.
 */
export function resolveTarget(target: string, peers: Peer[], opts: TargetOptions): Peer[] {
  const r = lookupTarget(target, peers, opts);
  if (r.ok) return r.peers;
  if (r.problem === 'invalid') throw usageError(r.reason);
  if (r.problem === 'ambiguous') throw ambiguousError(target.trim(), r.candidates, opts.localHost ?? null);
  throw notFound(target.trim(), peers, r);
}

/** The one resolver behind every `--to`, MCP `to` and chat `@name`: what `target` names among `peers` (and the known). */
export function lookupTarget(target: string, peers: Peer[], opts: TargetOptions): TargetLookup {
  const t = target.trim();
  if (t.length === 0) return { ok: false, problem: 'invalid', reason: '--to needs a target (a path, a session id, a name or a username)' };
  if (/[\u0000-\u001f\u007f]/.test(t)) return { ok: false, problem: 'invalid', reason: `--to '${printable(t)}' contains control characters` };
  const live = findAmong(t, peers, opts);
  if (live.kind !== 'none') return found(live);
  const liveIds = new Set(peers.map((p) => p.id));
  let known: Peer[] = [];
  for (const tier of opts.known ?? []) {
    known = tier();
    const hit = known.length > 0 ? findAmong(t, known, opts, liveIds, true) : { kind: 'none' as const };
    if (hit.kind !== 'none') return found(hit);
  }
  const gone = known.filter((p) => !liveIds.has(p.id));
  if (opts.namePrefix === true && !looksLikePath(t) && !t.includes(':')) {
    const lower = t.toLowerCase();
    const pre = peers.filter((p) => p.name.toLowerCase().startsWith(lower));
    if (pre.length === 1) return { ok: true, peers: pre };
    if (pre.length > 1) return { ok: false, problem: 'ambiguous', candidates: pre };
  }
  const isPath = looksLikePath(t) || /^[a-z0-9-]{1,32}:\//.test(t);
  return {
    ok: false,
    problem: 'unknown',
    human: t.startsWith('human:'),
    path: isPath ? (t.includes(':') ? t : pathOf(t, opts)) : null,
    closest: isPath ? [] : closest(t.replace(/^human:/, ''), [...peers, ...gone]),
    known: opts.known !== undefined,
  };
}

type Found = { kind: 'one'; peers: Peer[] } | { kind: 'ambiguous'; peers: Peer[] } | { kind: 'none' };

function found(f: Exclude<Found, { kind: 'none' }>): TargetLookup {
  return f.kind === 'one' ? { ok: true, peers: f.peers } : { ok: false, problem: 'ambiguous', candidates: f.peers };
}

/**
 * Who answers to a word, by id, by name and by earlier name, and who reads at a path. The
 * known parties (one array per change of the names file, up to thousands) are indexed once,
 * so a lookup by name costs the same with 10 known parties or 5000; the live roster (a new
 * array per send, a hundred at most) is scanned, which costs less than indexing it.
 */
interface Finder {
  id(k: string): Peer[];
  name(lower: string): Peer[];
  alias(lower: string): Peer[];
  origin(path: string): Peer[];
  /** A peer's place in the array: candidates are named in the order the array has them. */
  at(p: Peer): number;
}

const indexes = new WeakMap<Peer[], Finder>();

function scanOf(peers: Peer[]): Finder {
  return {
    id: (k) => peers.filter((p) => p.id === k),
    name: (k) => peers.filter((p) => p.name.toLowerCase() === k),
    alias: (k) => peers.filter((p) => p.aliases?.some((a) => a.toLowerCase() === k) === true),
    origin: (k) => peers.filter((p) => p.host === undefined && p.origin === k),
    at: (p) => peers.indexOf(p),
  };
}

function indexOf(peers: Peer[]): Finder {
  let f = indexes.get(peers);
  if (f) return f;
  const byId = new Map<string, Peer[]>();
  const byName = new Map<string, Peer[]>();
  const byAlias = new Map<string, Peer[]>();
  const byOrigin = new Map<string, Peer[]>();
  const at = new Map<Peer, number>();
  const put = (m: Map<string, Peer[]>, k: string, p: Peer) => {
    const list = m.get(k);
    if (list === undefined) m.set(k, [p]);
    else if (!list.includes(p)) list.push(p);
  };
  for (const [i, p] of peers.entries()) {
    at.set(p, i);
    put(byId, p.id, p);
    put(byName, p.name.toLowerCase(), p);
    for (const a of p.aliases ?? []) put(byAlias, a.toLowerCase(), p);
    if (p.host === undefined) put(byOrigin, p.origin, p);
  }
  const get = (m: Map<string, Peer[]>) => (k: string) => m.get(k) ?? [];
  f = { id: get(byId), name: get(byName), alias: get(byAlias), origin: get(byOrigin), at: (p) => at.get(p) ?? -1 };
  indexes.set(peers, f);
  return f;
}

/** The peers among `peers` (less `except`, ids) that `t` names: one set, several of one standing (ambiguous), or none. */
function findAmong(t: string, peers: Peer[], opts: TargetOptions, except?: ReadonlySet<string>, indexed = false): Found {
  const keep = (list: Peer[]): Peer[] => (except === undefined ? list : list.filter((p) => !except.has(p.id)));
  // `host:name` or `host:/path`: only members on that machine (issue 13).
  const q = QUALIFIED.exec(t);
  const hosts = q ? new Set(peers.flatMap((p) => (p.host !== undefined ? [p.host] : []))) : new Set<string>();
  if (q && (hosts.has(q[1]!) || q[1] === opts.localHost)) {
    const onHost = keep(peers.filter((p) => (q[1] === opts.localHost ? p.host === undefined : p.host === q[1])));
    const rest = q[2]!;
    if (rest.startsWith('/')) return several(onHost.filter((p) => p.origin === normalizeOrigin(rest)));
    return findAmong(rest, onHost, { ...opts, localHost: null });
  }
  const idx = indexed ? indexOf(peers) : scanOf(peers);
  if (looksLikePath(t)) {
    // A path names this machine's directories: members elsewhere are reached as host:/path.
    return several(keep(idx.origin(pathOf(t, opts))));
  }
  if (t.startsWith('human:')) {
    const user = t.slice('human:'.length);
    let h = keep(idx.id(user)).filter((p) => p.kind === 'human');
    // A human is a username on one machine: this machine's comes first (issue 13).
    if (h.some((p) => p.host === undefined)) h = h.filter((p) => p.host === undefined);
    if (h.length === 1 || (h.length > 1 && h.every((p) => p.host === undefined))) return { kind: 'one', peers: h };
    if (h.length > 1) return { kind: 'ambiguous', peers: h };
    return { kind: 'none' };
  }
  // An id and a display name can coincide (a human `nick` and a session named `nick`):
  // whoever the word names, by id or by name, is a candidate, and more than one is
  // ambiguous — never a silent pick (issue #10 §10). Session ids are global; a username is
  // not, so a local human wins over same-named humans elsewhere, who are reached as
  // host:name (issue 13: never confused with a local one).
  const lower = t.toLowerCase();
  let exact = [...new Set([...keep(idx.id(t)), ...keep(idx.name(lower))])].sort((a, b) => idx.at(a) - idx.at(b));
  if (exact.some((p) => p.kind === 'human' && p.host === undefined)) exact = exact.filter((p) => !(p.kind === 'human' && p.host !== undefined));
  if (exact.length === 1) return { kind: 'one', peers: exact };
  if (exact.length > 1) return { kind: 'ambiguous', peers: exact };
  // A name a party had before (names are kept for life, but a session renamed in Claude Code,
  // or a name from before names were given, is an earlier name): it still reaches that party;
  // two that had it are ambiguous, listed.
  const former = keep(idx.alias(lower));
  if (former.length === 1) return { kind: 'one', peers: former };
  if (former.length > 1) return { kind: 'ambiguous', peers: former };
  // A session id prefix of 8 or more characters, as `attend peers` shows them.
  if (t.length >= 8) {
    const byPrefix = peers.filter((p) => p.kind === 'agent' && p.id.startsWith(t) && !except?.has(p.id));
    if (byPrefix.length === 1) return { kind: 'one', peers: byPrefix };
  }
  return { kind: 'none' };
}

function pathOf(t: string, opts: TargetOptions): string {
  return normalizeOrigin(t.startsWith('~/') ? resolve(opts.home, t.slice(2)) : resolve(opts.cwd, t));
}

/**
 * Everyone live at a path is reached (one tray, every session there); of parties that are
 * gone, a path with several is ambiguous (each would be a guess).
 */
function several(at: Peer[]): Found {
  if (at.length === 0) return { kind: 'none' };
  return at.length > 1 && at.every((p) => p.gone) ? { kind: 'ambiguous', peers: at } : { kind: 'one', peers: at };
}

/** Nobody of that name: say who is closest among the known, and who is live. */
function notFound(t: string, peers: Peer[], r: Extract<TargetLookup, { problem: 'unknown' }>): Error {
  const live = describeLive(peers);
  if (r.path !== null) return notFoundError(`${r.known ? 'nobody known' : 'nobody live'} at ${printable(r.path, 200)}`, live);
  const what = r.human ? `${r.known ? 'no known' : 'no live'} human '${printable(t.slice('human:'.length))}'` : `${r.known ? 'no known' : 'no live'} recipient '${printable(t)}'`;
  const near = r.closest.map((p) => neutralize(closeLabel(p)));
  return notFoundError(what, near.length > 0 ? `closest: ${near.join(', ')}; ${live}` : live);
}

/** A party among the closest: `host:name` elsewhere, an agent that ended marked gone (a person who is not in chat is not gone: they read when they look). */
function closeLabel(p: Peer): string {
  return `${qualifiedName(p)}${p.gone && p.kind === 'agent' ? ' (gone)' : ''}`;
}

/** The known parties nearest a word (edit distance 2, a prefix or a substring), closest first, at most 5, one per label. */
function closest(word: string, candidates: Peer[]): Peer[] {
  const w = word.toLowerCase();
  const scored: { p: Peer; label: string; d: number }[] = [];
  const seen = new Set<string>();
  for (const p of candidates) {
    const n = p.name.toLowerCase();
    let d = editDistance(w, n, 2);
    if (d > 2) {
      if (w.length < 2 || !(n.includes(w) || w.includes(n))) continue;
      d = 3;
    }
    const label = closeLabel(p);
    if (seen.has(label)) continue;
    seen.add(label);
    scored.push({ p, label, d });
  }
  return scored
    .sort((a, b) => a.d - b.d || a.label.localeCompare(b.label))
    .slice(0, 5)
    .map((x) => x.p);
}

export function resolveTargets(targets: string[], peers: Peer[], opts: TargetOptions): Peer[] {
  const out = new Map<string, Peer>();
  for (const t of targets) for (const p of resolveTarget(t, peers, opts)) out.set(p.id, p);
  return [...out.values()];
}
