// A node's rotation record (issue 20, Must have 2): the authority for which keys are a local
// node's, kept in the trust directory beside the private keys, never in the bus. Pure: the
// signature check comes in as a function (tools/bus/trust/anchors.ts passes node:crypto's).
//
//   <key id> <created ms> <kind> <signature, base64>     one line per key, oldest first
//
// kinds:
//   first    the node's first key, signed by itself (it proves the writer held it)
//   rotated  a new key, signed by the key on the line before (as NATS chains account keys
//            or TUF rotates roots: only the holder of the current key can name the next)
//   reset    a new key that the one before did NOT sign (it was lost or deleted), signed by
//            itself: readers accept it, and say that the node has a new identity since then
//
// Append-only: a line is never rewritten. A link that does not hold (a line that does not
// parse, a signature that does not verify, a `first` after line one, a key seen before)
// breaks the record there: the keys from the break on are refused, the ones before it stand.

import { decodeKeyId, lengthPrefixed } from './sign.js';

/** Its own domain tag: a rotation signature can never be replayed as a message or a delegation. */
const ROTATION_DOMAIN = 'attend/key-rotation/v1';

export type LinkKind = 'first' | 'rotated' | 'reset';

export interface ChainLink {
  keyId: string;
  created: number;
  kind: LinkKind;
  /** base64 of the 64-byte signature over rotationSigningBytes. */
  sig: string;
}

export interface ChainKey {
  keyId: string;
  created: number;
  /** When this key is part of a new identity (a `reset` at or before it): the reset's time. */
  newSince?: number;
}

export interface Chain {
  /** The keys the record vouches for, oldest first (the verified prefix). */
  keys: ChainKey[];
  /** The first link that does not hold (line numbers from 1), when there is one. */
  broken?: { line: number; reason: string };
  /** The times of the record's resets, oldest first. */
  resets: number[];
}

/**
 * What a link's signature covers: the node, the key before it (empty for `first`), the new
 * key, its time and its kind, each length-prefixed under the rotation domain tag.
 */
export function rotationSigningBytes(node: string, prev: string, link: Pick<ChainLink, 'keyId' | 'created' | 'kind'>): Uint8Array {
  return lengthPrefixed(ROTATION_DOMAIN, [node, prev, link.keyId, String(link.created), link.kind]);
}

export function formatLink(l: ChainLink): string {
  return `${l.keyId} ${l.created} ${l.kind} ${l.sig}\n`;
}

const SIG_B64 = /^[A-Za-z0-9+/]{86}==$/;
const MS = /^(0|[1-9][0-9]{0,15})$/;
const KINDS: ReadonlySet<string> = new Set(['first', 'rotated', 'reset']);

function parseLink(line: string): ChainLink | string {
  const f = line.split(' ');
  if (f.length !== 4) return 'not a record line (key id, time, kind, signature)';
  const [keyId, created, kind, sig] = f as [string, string, string, string];
  if (decodeKeyId(keyId) === null) return 'not a key id';
  if (!MS.test(created)) return 'not a time';
  if (!KINDS.has(kind)) return `an unknown kind '${kind.slice(0, 20)}'`;
  if (!SIG_B64.test(sig)) return 'the signature is not 64 bytes of base64';
  return { keyId, created: Number(created), kind: kind as LinkKind, sig };
}

/** Check a signature: key id, the signed bytes, base64 signature. */
export type VerifyFn = (keyId: string, bytes: Uint8Array, sig: string) => boolean;

/** Read and check a node's record; every link must hold for the keys after it to count. */
export function readChain(node: string, text: string, verify: VerifyFn): Chain {
  const keys: ChainKey[] = [];
  const resets: number[] = [];
  const lines = text.split('\n');
  // The record ends with a newline; anything after the last one is a line too (a torn append).
  if (lines[lines.length - 1] === '') lines.pop();
  const seen = new Set<string>();
  let newSince: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const broken = (reason: string): Chain => ({ keys, broken: { line: i + 1, reason }, resets });
    const link = parseLink(lines[i] as string);
    if (typeof link === 'string') return broken(link);
    if (seen.has(link.keyId)) return broken('a key that is already in the record');
    const prev = keys[keys.length - 1]?.keyId ?? '';
    if (link.kind === 'first' && i > 0) return broken('a first key after the first line (a replaced key must say reset)');
    if (link.kind === 'rotated' && i === 0) return broken('a rotation with no key before it');
    const signer = link.kind === 'rotated' ? prev : link.keyId;
    if (!verify(signer, rotationSigningBytes(node, prev, link), link.sig)) {
      return broken(link.kind === 'rotated' ? 'not signed by the key before it' : 'not signed by its own key');
    }
    seen.add(link.keyId);
    if (link.kind === 'reset') {
      resets.push(link.created);
      newSince = link.created;
    }
    keys.push({ keyId: link.keyId, created: link.created, ...(newSince !== undefined ? { newSince } : {}) });
  }
  return { keys, resets };
}
