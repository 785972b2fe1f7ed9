// Delegations (spec §7, issue 14 §5): `attend delegate <session>` signs, as the human, "this
// session may speak on my behalf, in these scopes, until then". A message that carries
// `on_behalf_of:<human>` shows `(verified)` only while such a delegation covers it, and
// `(claimed)` otherwise.
//
//   <root>/delegations/<principal>/<delegate>.json   the newest delegation for the pair

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WIDE_CLASS } from '../../wire/envelope.js';
import { idTime } from '../../wire/ids.js';
import { type Delegation, decodeKeyId, delegationSigningBytes, destinationOf, scopeCovers } from '../../wire/sign.js';
import type { Scope } from '../../wire/envelope.js';
import { fileStamp, writeFileAtomic } from '../store/atomic.js';
import { refusedError, usageError } from '../../wire/errors.js';
import { anchorOf, localAnchor } from './anchors.js';
import { signBytes, verifyBytes } from './ed25519.js';
import { loadOrCreateKey } from './keys.js';

const NODE_FILE = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,127}$/;

export interface SignedDelegation extends Delegation {
  v: 1;
  sig: string;
}

function delegationsDir(root: string): string {
  return join(root, 'delegations');
}

export function delegationFile(root: string, principal: string, delegate: string): string {
  if (!NODE_FILE.test(principal) || !NODE_FILE.test(delegate)) throw usageError('not a node id that can hold a delegation');
  return join(delegationsDir(root), principal, `${delegate}.json`);
}

/** Changes when a delegation is given or taken back (its principal's directory), for a reader that keeps what it decided. */
export function delegationsStamp(root: string): string {
  const dir = delegationsDir(root);
  let principals: string[] = [];
  try {
    principals = readdirSync(dir).sort();
  } catch {
    // none given yet
  }
  return [fileStamp(dir), ...principals.map((p) => fileStamp(join(dir, p)))].join(',');
}

/** Parse `2h`, `30m`, `90s`, `1d`. */
export function parseTtl(text: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!m) throw usageError(`--ttl '${text.slice(0, 20)}' is not a duration (30m, 2h, 1d)`);
  const n = Number(m[1]);
  const ms = n * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
  if (ms <= 0 || ms > 30 * 86_400_000) throw usageError('--ttl is between 1s and 30d');
  return ms;
}

export function parseScope(text: string): string {
  const t = text.trim();
  if (t === '*' || /^#[A-Za-z0-9_.-]+$/.test(t) || (t.startsWith('/') && !/[\n\r]/.test(t))) return t;
  if (/^[A-Za-z0-9_.-]+$/.test(t)) return `#${t}`;
  throw usageError(`--scope '${t.slice(0, 40)}' is not *, a #channel or an absolute path`);
}

/** Only a person delegates (issue 14 §5): a session or another agent is refused, exit 4. */
export function requirePrincipal(who: { kind: 'agent' | 'human'; id: string }): void {
  if (who.kind !== 'human') throw refusedError(`only a person delegates; ${who.id} is an agent`, 'ask the person at the terminal to run it');
}

/** Sign and store a delegation from the human `principal` to `delegate`. */
export function delegate(opts: {
  root: string;
  keysDir: string;
  principal: { kind: 'agent' | 'human'; id: string };
  delegate: string;
  scopes: string[];
  now: number;
  ttlMs: number;
}): SignedDelegation {
  requirePrincipal(opts.principal);
  if (!WIDE_CLASS.test(opts.delegate)) throw usageError('not a valid delegate id');
  const key = loadOrCreateKey({ keysDir: opts.keysDir, root: opts.root, node: opts.principal.id, now: opts.now });
  const dk = anchorOf(opts.keysDir, opts.delegate).keys.at(-1)?.keyId ?? '';
  const d: Delegation = {
    principal: opts.principal.id,
    principalKey: key.keyId,
    delegate: opts.delegate,
    delegateKey: dk,
    scopes: opts.scopes.length > 0 ? opts.scopes : ['*'],
    notBefore: opts.now,
    expires: opts.now + opts.ttlMs,
  };
  const signed: SignedDelegation = { v: 1, ...d, sig: signBytes(key.privateKey, delegationSigningBytes(d)) };
  writeFileAtomic(delegationFile(opts.root, d.principal, d.delegate), `${JSON.stringify(signed, null, 2)}\n`);
  return signed;
}

export type OboCheck = { state: 'verified'; expires: number } | { state: 'claimed'; reason: string };

function readDelegation(root: string, principal: string, delegateId: string): SignedDelegation | string {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(delegationFile(root, principal, delegateId), 'utf8'));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? `no delegation from ${principal} to ${delegateId}` : 'the delegation file does not parse';
  }
  const o = raw as Partial<SignedDelegation>;
  if (
    o.v !== 1 ||
    typeof o.principal !== 'string' ||
    typeof o.principalKey !== 'string' ||
    typeof o.delegate !== 'string' ||
    typeof o.delegateKey !== 'string' ||
    !Array.isArray(o.scopes) ||
    !o.scopes.every((s) => typeof s === 'string') ||
    typeof o.notBefore !== 'number' ||
    typeof o.expires !== 'number' ||
    typeof o.sig !== 'string'
  ) {
    return 'the delegation file is malformed';
  }
  return o as SignedDelegation;
}

/**
 * Is `on_behalf_of` verified for this message? The delegation must be signed by a key
 * in the principal's key record, name this sender (and, when it names one, a key of the
 * sender's), cover the message's directory or origin, and be in force both when the
 * message was written and now. The message itself must carry a good signature.
 */
export function checkOnBehalfOf(root: string, m: { id: string; scope: Scope; cwd: string; fromId: string; onBehalfOf?: string | undefined; sig?: string | undefined }, now: number): OboCheck | null {
  if (m.onBehalfOf === undefined) return null;
  if (m.sig !== 'ok') return { state: 'claimed', reason: 'the message is not signed by its sender' };
  const d = readDelegation(root, m.onBehalfOf, m.fromId);
  if (typeof d === 'string') return { state: 'claimed', reason: d };
  if (d.principal !== m.onBehalfOf || d.delegate !== m.fromId) return { state: 'claimed', reason: 'the delegation names someone else' };
  if (!decodeKeyId(d.principalKey) || !localAnchor(root, d.principal, d.principalKey).keys.some((k) => k.keyId === d.principalKey)) {
    return { state: 'claimed', reason: `the delegation is signed by a key that is not ${d.principal}'s` };
  }
  if (!verifyBytes(d.principalKey, delegationSigningBytes(d), d.sig)) return { state: 'claimed', reason: 'the delegation signature does not verify' };
  if (d.delegateKey !== '' && !localAnchor(root, d.delegate, d.delegateKey).keys.some((k) => k.keyId === d.delegateKey)) {
    return { state: 'claimed', reason: `the delegation names a key that is not ${d.delegate}'s` };
  }
  const t = idTime(m.id) ?? now;
  if (now > d.expires || t > d.expires) return { state: 'claimed', reason: `the delegation expired ${new Date(d.expires).toISOString()}` };
  if (t < d.notBefore) return { state: 'claimed', reason: 'the message predates the delegation' };
  if (!scopeCovers(d.scopes, destinationOf(m.scope), m.cwd)) return { state: 'claimed', reason: `the delegation does not cover ${destinationOf(m.scope)}` };
  return { state: 'verified', expires: d.expires };
}
