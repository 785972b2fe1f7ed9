// `--to` resolution (docs/architecture.md, "Identity": display names resolve back to ids at every input boundary).
// A target is an origin path, a session id, a display name or a human username, and must
// name someone live.

import { isAbsolute, resolve } from 'node:path';
import { normalizeOrigin } from '../../identity/resolve.js';
import { printable } from '../../wire/names.js';
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
function ambiguous(t: string, found: Peer[], localHost: string | null): never {
  const anyRemote = found.some((p) => p.host !== undefined);
  const label = (p: Peer) => (anyRemote ? `${p.host ?? localHost ?? 'local'}:${p.name}` : p.name);
  throw usageError(
    `'${printable(t)}' is ambiguous: ${found.map((p) => neutralize(`${label(p)} (${p.kind}, ${p.id})`)).join(', ')}`,
    anyRemote ? 'qualify it with the host (host:name), or name a session by its id' : 'name a session by its id or path, a person as human:<username>',
  );
}

const QUALIFIED = /^([a-z0-9-]{1,32}):(.+)$/;

/** Resolve one target to the live peers it names. Throws AttendError when it names none. */
export function resolveTarget(target: string, peers: Peer[], opts: { cwd: string; home: string; self?: string; localHost?: string | null }): Peer[] {
  const t = target.trim();
  if (t.length === 0) throw usageError('--to needs a target (a path, a session id, a name or a username)');
  if (/[\u0000-\u001f\u007f]/.test(t)) throw usageError(`--to '${printable(t)}' contains control characters`);
  // `host:name` or `host:/path`: only members on that machine (issue 13).
  const q = QUALIFIED.exec(t);
  const hosts = new Set(peers.flatMap((p) => (p.host !== undefined ? [p.host] : [])));
  if (q && (hosts.has(q[1]!) || q[1] === opts.localHost)) {
    const onHost = peers.filter((p) => (q[1] === opts.localHost ? p.host === undefined : p.host === q[1]));
    const rest = q[2]!;
    if (rest.startsWith('/')) {
      const found = onHost.filter((p) => p.origin === normalizeOrigin(rest));
      if (found.length === 0) throw notFoundError(`nobody live at ${printable(t, 200)}`, describeLive(peers));
      return found;
    }
    return resolveTarget(rest, onHost, { ...opts, localHost: null });
  }
  const local = peers.filter((p) => p.host === undefined);
  if (looksLikePath(t)) {
    // A path names this machine's directories: members elsewhere are reached as host:/path.
    const abs = normalizeOrigin(t.startsWith('~/') ? resolve(opts.home, t.slice(2)) : resolve(opts.cwd, t));
    const found = local.filter((p) => p.origin === abs);
    if (found.length === 0) throw notFoundError(`nobody live at ${printable(abs, 200)}`, describeLive(peers));
    return found;
  }
  if (t.startsWith('human:')) {
    const user = t.slice('human:'.length);
    let h = peers.filter((p) => p.kind === 'human' && p.id === user);
    // A human is a username on one machine: this machine's comes first (issue 13).
    if (h.some((p) => p.host === undefined)) h = h.filter((p) => p.host === undefined);
    if (h.length === 1 || (h.length > 1 && h.every((p) => p.host === undefined))) return h;
    if (h.length > 1) ambiguous(t, h, opts.localHost ?? null);
    throw notFoundError(`no live human '${printable(user)}'`, describeLive(peers));
  }
  // An id and a display name can coincide (a human `nick` and a session named `nick`):
  // whoever the word names, by id or by name, is a candidate, and more than one is
  // ambiguous — never a silent pick (issue #10 §10). Session ids are global; a username is
  // not, so a local human wins over same-named humans elsewhere, who are reached as
  // host:name (issue 13: never confused with a local one).
  const lower = t.toLowerCase();
  let exact = peers.filter((p) => p.id === t || p.name.toLowerCase() === lower);
  if (exact.some((p) => p.kind === 'human' && p.host === undefined)) exact = exact.filter((p) => !(p.kind === 'human' && p.host !== undefined));
  if (exact.length === 1) return exact;
  if (exact.length > 1) ambiguous(t, exact, opts.localHost ?? null);
  // A session id prefix of 8 or more characters, as `attend peers` shows them.
  if (t.length >= 8) {
    const byPrefix = peers.filter((p) => p.kind === 'agent' && p.id.startsWith(t));
    if (byPrefix.length === 1) return byPrefix;
  }
  throw notFoundError(`no live recipient '${printable(t)}'`, describeLive(peers));
}

export function resolveTargets(targets: string[], peers: Peer[], opts: { cwd: string; home: string; localHost?: string | null }): Peer[] {
  const out = new Map<string, Peer>();
  for (const t of targets) for (const p of resolveTarget(t, peers, opts)) out.set(p.id, p);
  return [...out.values()];
}
