// `--to` resolution (docs/architecture.md, "Identity": display names resolve back to ids at every input boundary).
// A target is an origin path, a session id, a display name or a human username, and must
// name someone live.

import { isAbsolute, resolve } from 'node:path';
import { normalizeOrigin } from '../identity/resolve.js';
import { printable } from '../wire/names.js';
import { neutralize } from '../wire/render.js';
import { notFoundError, usageError } from './errors.js';
import type { Peer } from './roster.js';

function looksLikePath(t: string): boolean {
  return isAbsolute(t) || t.startsWith('./') || t.startsWith('../') || t === '.' || t === '..' || t.startsWith('~/');
}

export function describeLive(peers: Peer[]): string {
  if (peers.length === 0) return 'nobody is live on this bus';
  // Names and paths come from session records and heartbeats other processes wrote: data.
  return `live: ${peers.map((p) => neutralize(p.kind === 'human' ? `${p.name} (human)` : `${p.name} (${p.id.slice(0, 8)}…, ${p.origin})`)).join(', ')}`;
}

/** Resolve one target to the live peers it names. Throws AttendError when it names none. */
export function resolveTarget(target: string, peers: Peer[], opts: { cwd: string; home: string; self?: string }): Peer[] {
  const t = target.trim();
  if (t.length === 0) throw usageError('--to needs a target (a path, a session id, a name or a username)');
  if (/[\u0000-\u001f\u007f]/.test(t)) throw usageError(`--to '${printable(t)}' contains control characters`);
  if (looksLikePath(t)) {
    const abs = normalizeOrigin(t.startsWith('~/') ? resolve(opts.home, t.slice(2)) : resolve(opts.cwd, t));
    const found = peers.filter((p) => p.origin === abs);
    if (found.length === 0) throw notFoundError(`nobody live at ${printable(abs, 200)}`, describeLive(peers));
    return found;
  }
  if (t.startsWith('human:')) {
    const user = t.slice('human:'.length);
    const h = peers.filter((p) => p.kind === 'human' && p.id === user);
    if (h.length > 0) return h;
    throw notFoundError(`no live human '${printable(user)}'`, describeLive(peers));
  }
  // An id and a display name can coincide (a human `nick` and a session named `nick`):
  // whoever the word names, by id or by name, is a candidate, and more than one is
  // ambiguous — never a silent pick (issue #10 §10).
  const lower = t.toLowerCase();
  const exact = peers.filter((p) => p.id === t || p.name.toLowerCase() === lower);
  if (exact.length === 1) return exact;
  if (exact.length > 1) {
    throw usageError(
      `'${printable(t)}' is ambiguous: ${exact.map((p) => neutralize(`${p.name} (${p.kind}, ${p.id})`)).join(', ')}`,
      'name a session by its id or path, a person as human:<username>',
    );
  }
  // A session id prefix of 8 or more characters, as `attend peers` shows them.
  if (t.length >= 8) {
    const byPrefix = peers.filter((p) => p.kind === 'agent' && p.id.startsWith(t));
    if (byPrefix.length === 1) return byPrefix;
  }
  throw notFoundError(`no live recipient '${printable(t)}'`, describeLive(peers));
}

export function resolveTargets(targets: string[], peers: Peer[], opts: { cwd: string; home: string }): Peer[] {
  const out = new Map<string, Peer>();
  for (const t of targets) for (const p of resolveTarget(t, peers, opts)) out.set(p.id, p);
  return [...out.values()];
}
