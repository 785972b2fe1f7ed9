// Ed25519 with node:crypto (spec §7): signing and checking, for messages, delegations and the
// rotation record alike. The bytes come from tools/wire; the keys from keys.ts and anchors.ts.

import type { KeyObject } from 'node:crypto';
import { decodeKeyId } from '../../wire/sign.js';

type Crypto = typeof import('node:crypto');
let cryptoModule: Crypto | undefined;
/**
 * node:crypto loads on the first signature or check, not with this module: loading it costs
 * ~3 ms, which commands that never sign or verify (peers, whoami, status) do without.
 */
export function crypto(): Crypto {
  return (cryptoModule ??= process.getBuiltinModule('node:crypto') as Crypto);
}

export function signBytes(key: KeyObject, bytes: Uint8Array): string {
  return crypto().sign(null, bytes, key).toString('base64');
}

const publicKeyCache = new Map<string, KeyObject>();

/** Check a base64 signature against the public key a key id names. */
export function verifyBytes(keyId: string, bytes: Uint8Array, sigB64: string): boolean {
  let pub = publicKeyCache.get(keyId);
  if (!pub) {
    const raw = decodeKeyId(keyId);
    if (!raw) return false;
    pub = crypto().createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
    publicKeyCache.set(keyId, pub);
  }
  const sig = Buffer.from(sigB64, 'base64');
  if (sig.length !== 64) return false;
  return crypto().verify(null, bytes, pub, sig);
}
