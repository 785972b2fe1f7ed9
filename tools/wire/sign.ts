// Canonical signing bytes, key ids and the `.sig` sidecar (spec §7, issue 14). Pure: the
// signature itself is made and checked in tools/bus/trust/keys.ts with node:crypto; this module
// only decides WHICH bytes are signed and how the results are written down.
//
// The signature covers the parsed fields, never the raw line: a domain tag, then a fixed
// field order, each field a 4-byte big-endian length and its UTF-8 bytes, an absent field
// the empty string. `to`, the destination directory and the origin host are signed so a
// message cannot be re-routed (copied into another tray or channel) or re-attributed.

import type { Envelope, Scope } from './envelope.js';

/** Domain tags: a message signature can never be replayed as a delegation or vice versa. */
const MESSAGE_DOMAIN = 'attend/message/v1';
/**
 * A line with an `urgency` tag (issue 23 §3) is signed under v2: v1's fields, then the
 * urgency. A line without one signs exactly as v1, so every signature made before the tag
 * existed still verifies, and a tag added to or stripped from a signed line fails its check
 * (the reader picks the domain by the tag it parsed) and the line is held.
 */
const MESSAGE_DOMAIN_V2 = 'attend/message/v2';
const DELEGATION_DOMAIN = 'attend/delegation/v1';

const utf8 = new TextEncoder();

/** Domain tag, then each field length-prefixed (u32 big-endian) in the order given. */
export function lengthPrefixed(domain: string, fields: readonly string[]): Uint8Array {
  const parts = [domain, ...fields].map((f) => utf8.encode(f));
  const total = parts.reduce((n, p) => n + 4 + p.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let off = 0;
  for (const p of parts) {
    view.setUint32(off, p.length, false);
    off += 4;
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Where a file sits, as signed: `*` (#open), `#name` (a channel), `tray:<key>`. */
export function destinationOf(scope: Scope): string {
  if (scope.kind === 'open') return '*';
  if (scope.kind === 'channel') return `#${scope.name}`;
  return `tray:${scope.key}`;
}

interface SignedFields {
  /** The message id (the file stem): a sidecar from another message does not verify. */
  id: string;
  /** destinationOf(scope): a copy into another directory does not verify. */
  dest: string;
  /** The sender's host name (spec §7: "the origin host"), carried in the sidecar. */
  host: string;
  envelope: Envelope;
}

/**
 * The field order (id, dest, host, from, project, cwd, from_kind, from_id, on_behalf_of, to,
 * re, body, then under v2 urgency) is part of the format; changing it is a new domain tag.
 */
/**
 * What the adapters' generic webhook signs with the person's key (docs/adapters.md): the
 * UTF-8 of `attend/webhook/v1\n<timestamp>\n<body>`, plain so a receiver rebuilds it with
 * the public key alone. It is never another signed form: those are length-prefixed, their
 * first byte 0 (a domain's length), and this one's first byte is 'a'.
 */
export function webhookSigningBytes(timestamp: string, body: string): Uint8Array {
  return utf8.encode(`${WEBHOOK_DOMAIN}\n${timestamp}\n${body}`);
}
export const WEBHOOK_DOMAIN = 'attend/webhook/v1';

export function messageSigningBytes(f: SignedFields): Uint8Array {
  const e = f.envelope;
  const v1 = [f.id, f.dest, f.host, e.from, e.project, e.cwd, e.fromKind ?? '', e.fromId ?? '', e.onBehalfOf ?? '', e.to ?? '', e.re ?? '', e.body];
  return e.urgency === undefined ? lengthPrefixed(MESSAGE_DOMAIN, v1) : lengthPrefixed(MESSAGE_DOMAIN_V2, [...v1, e.urgency]);
}

// --- Key ids: the NATS nkey text form of an Ed25519 public key ------------------------
// base32 (RFC 4648, no padding) of prefix byte + 32 key bytes + CRC16/XMODEM (little
// endian): 56 characters, all in the envelope's wide value class. The id IS the public key,
// so a reader needs no lookup to check a signature, only to check whose key it is.

/** nkeys' "user" prefix ('U'). The text form is shared with NATS; the key never is. */
const KEY_PREFIX_BYTE = 20 << 3;
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

// Decoding runs a few times per key record in `attend doctor` (every node's, issue 22's
// Performance), mostly before the JIT warms up, so it is written for the interpreter: a nibble
// table for the CRC (two lookups a byte, not eight shifts) and a char-code table for base32,
// indexed loops rather than iterators.

/** CRC16/XMODEM of every nibble value, shifted into the top four bits. */
const CRC_NIBBLE = Array.from({ length: 16 }, (_, n) => {
  let crc = n << 12;
  for (let i = 0; i < 4; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

function crc16(bytes: Uint8Array, end = bytes.length): number {
  let crc = 0;
  for (let i = 0; i < end; i++) {
    const b = bytes[i] as number;
    crc = ((crc << 4) & 0xffff) ^ (CRC_NIBBLE[(crc >>> 12) ^ (b >>> 4)] as number);
    crc = ((crc << 4) & 0xffff) ^ (CRC_NIBBLE[(crc >>> 12) ^ (b & 15)] as number);
  }
  return crc;
}

/** Each base32 character's value by char code; -1 for a character outside the alphabet. */
const B32_VALUE = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < 32; i++) t[B32.charCodeAt(i)] = i;
  return t;
})();

export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Uint8Array | null {
  const out = new Uint8Array((text.length * 5) >>> 3);
  let n = 0;
  let bits = 0;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? (B32_VALUE[c] as number) : -1;
    if (v < 0) return null;
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out[n++] = (value >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

export function encodeKeyId(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new Error(`an Ed25519 public key is 32 bytes, not ${publicKey.length}`);
  const raw = new Uint8Array(35);
  raw[0] = KEY_PREFIX_BYTE;
  raw.set(publicKey, 1);
  const crc = crc16(raw, 33);
  raw[33] = crc & 0xff;
  raw[34] = crc >>> 8;
  return base32Encode(raw);
}

/** The 32 public-key bytes of a key id, or null when it is not one (length, prefix, checksum). */
export function decodeKeyId(keyId: string): Uint8Array | null {
  if (keyId.length !== 56) return null;
  const raw = base32Decode(keyId);
  if (!raw || raw.length !== 35 || raw[0] !== KEY_PREFIX_BYTE) return null;
  const crc = crc16(raw, 33);
  if (raw[33] !== (crc & 0xff) || raw[34] !== crc >>> 8) return null;
  return raw.slice(1, 33);
}

// --- The sidecar: `<id>.sig`, written before the `.signal` rename ----------------------
//   attend-sig v1
//   key <key id>
//   host <origin host>
//   sig <base64 of the 64-byte signature>
// One `key value` line each, so a human can read it and a truncated file fails to parse.

export interface Sidecar {
  keyId: string;
  host: string;
  /** base64 (standard alphabet, padded) of the 64 signature bytes. */
  sig: string;
}

const SIDECAR_HEAD = 'attend-sig v1';
const HOST_CLASS = /^[A-Za-z0-9_.:-]{1,253}$/;
const SIG_B64 = /^[A-Za-z0-9+/]{86}==$/;

export function formatSidecar(s: Sidecar): string {
  return `${SIDECAR_HEAD}\nkey ${s.keyId}\nhost ${s.host}\nsig ${s.sig}\n`;
}

/** Parse a sidecar; a string reason when it is not one (truncated, wrong version, bad field). */
export function parseSidecar(text: string): Sidecar | string {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines[0] !== SIDECAR_HEAD) return 'not an attend-sig v1 sidecar';
  const fields = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const sp = line.indexOf(' ');
    if (sp <= 0) return `malformed sidecar line '${line.slice(0, 40)}'`;
    const k = line.slice(0, sp);
    if (fields.has(k)) return `repeated sidecar field '${k}'`;
    fields.set(k, line.slice(sp + 1));
  }
  const keyId = fields.get('key');
  const host = fields.get('host');
  const sig = fields.get('sig');
  if (keyId === undefined || host === undefined || sig === undefined) return 'truncated sidecar (needs key, host and sig)';
  if (decodeKeyId(keyId) === null) return 'the key id is not a valid public key';
  if (!HOST_CLASS.test(host)) return 'the host is not a valid host name';
  if (!SIG_B64.test(sig)) return 'the signature is not 64 bytes of base64';
  return { keyId, host, sig };
}

/** A host name as signed: outside [A-Za-z0-9_.:-] becomes `_`, at most 253 characters. */
export function sanitizeHost(raw: string): string {
  const s = raw.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 253);
  return s.length > 0 ? s : 'localhost';
}

// --- Delegations: a principal (a person) lets a delegate (a session) speak on its behalf --
// Signed under their own domain tag (spec §7): delegate, delegate key, principal, principal
// key, scopes, not-before, expiry. A scope is `*`, `#<channel>`, or an absolute path the
// message's origin must be under.

export interface Delegation {
  principal: string;
  principalKey: string;
  delegate: string;
  /** The delegate's key at signing time; empty when it had none yet (bound by id only). */
  delegateKey: string;
  scopes: string[];
  notBefore: number;
  expires: number;
}

export function delegationSigningBytes(d: Delegation): Uint8Array {
  return lengthPrefixed(DELEGATION_DOMAIN, [d.delegate, d.delegateKey, d.principal, d.principalKey, d.scopes.join('\n'), String(d.notBefore), String(d.expires)]);
}

/** Does a delegation's scope cover a message in `dest` (destinationOf) from origin `cwd`? */
export function scopeCovers(scopes: readonly string[], dest: string, cwd: string): boolean {
  return scopes.some((s) => s === '*' || (s.startsWith('#') && s === dest) || (s.startsWith('/') && (cwd === s || cwd.startsWith(s.endsWith('/') ? s : `${s}/`))));
}
