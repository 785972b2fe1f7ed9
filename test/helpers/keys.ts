// What a worker that can write the bus does to sign as someone else (issue 20): it signs with
// a key it holds (its own, from its key file) and names any node as the sender. No private
// key of the victim is read.

import { createPrivateKey, sign } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Envelope, Scope } from '../../tools/wire/envelope.js';
import { formatSignal } from '../../tools/wire/envelope.js';
import { destinationOf, encodeKeyId, formatSidecar, messageSigningBytes } from '../../tools/wire/sign.js';
import { scopeDir } from '../../tools/bus/store/layout.js';

/** A message as `attend inbox --json` lists it, the fields the key tests read. */
export interface InboxJson {
  id: string;
  fromId: string;
  fromHost?: string;
  sig: string | null;
  body: string;
  held?: string;
  newKeySince?: string;
}

export const keysDirOf = (home: string) => join(home, '.config', 'attend', 'keys');
/** The records beside it: rotation records, other machines' keys, pins (tools/bus/trust/anchors.ts). */
export const trustDirOf = (home: string) => join(home, '.config', 'attend', 'trust');

/** The key id of a JWK key file. */
export function keyIdOfFile(file: string): string {
  const jwk = JSON.parse(readFileSync(file, 'utf8')) as { x: string };
  return encodeKeyId(Uint8Array.from(Buffer.from(jwk.x, 'base64url')));
}

/** Write `env` into `scope` with a sidecar signed by the key in `keyFile`, naming `host`. */
export function writeSignedWith(root: string, scope: Scope, id: string, env: Envelope, keyFile: string, host: string): string {
  const key = createPrivateKey({ key: JSON.parse(readFileSync(keyFile, 'utf8')) as Record<string, string>, format: 'jwk' });
  const dir = scopeDir(root, scope);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const sig = sign(null, messageSigningBytes({ id, dest: destinationOf(scope), host, envelope: env }), key).toString('base64');
  writeFileSync(join(dir, `${id}.sig`), formatSidecar({ keyId: keyIdOfFile(keyFile), host, sig }), { mode: 0o600 });
  const path = join(dir, `${id}.signal`);
  writeFileSync(path, `${formatSignal(env)}\n`, { mode: 0o600 });
  return path;
}
