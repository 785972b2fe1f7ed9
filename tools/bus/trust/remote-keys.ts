// Public keys of parties on other machines (issue 13 with issue 14): recorded by
// `attend relay` from what each machine's relay published, read by every reader that checks
// a remote message's signature (tools/bus/trust/signing.ts).
//
//   <root>/keys/@<host>/<node>.pub   the key ids machine <host> published for its node <node>,
//                                    one `<key id> <created ms>` a line (as keys/<node>.pub)
//
// Kept apart from this machine's keys/<node>.pub on purpose: a machine can only ever vouch
// for keys under its own name, so no remote machine can add a key to a local node's list
// (which would let it sign as that node here), nor to another machine's.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeKeyId } from '../../wire/sign.js';
import { writeFileAtomic } from '../store/atomic.js';
import { type PublishedKey, publishedKeysDir } from './keys.js';

const HOST = /^[a-z0-9-]{1,32}$/;
const NODE = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,127}$/;

/** Null when host or node cannot name a file (never a path out of keys/). */
function remoteKeysPath(root: string, host: string, node: string): string | null {
  if (!HOST.test(host) || !NODE.test(node)) return null;
  return join(publishedKeysDir(root), `@${host}`, `${node}.pub`);
}

function parseKeyLines(text: string): PublishedKey[] {
  const out: PublishedKey[] = [];
  for (const line of text.split('\n')) {
    const [keyId, created] = line.split(' ');
    if (keyId && decodeKeyId(keyId)) out.push({ keyId, created: Number(created) || 0 });
  }
  return out;
}

/** The keys machine `host` published for its node `node`, oldest first; [] when none. */
export function readRemoteKeys(root: string, host: string, node: string): PublishedKey[] {
  const path = remoteKeysPath(root, host, node);
  if (!path) return [];
  try {
    return parseKeyLines(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/**
 * Record what `host` published for `node` (a key list's text): the list only grows, as a
 * local one does, so a key rotated away still verifies the messages it signed. Returns
 * whether anything was added.
 */
export function recordRemoteKeys(root: string, host: string, node: string, text: string): boolean {
  const path = remoteKeysPath(root, host, node);
  if (!path) return false;
  const have = readRemoteKeys(root, host, node);
  const known = new Set(have.map((k) => k.keyId));
  const add = parseKeyLines(text).filter((k) => !known.has(k.keyId) && (known.add(k.keyId), true));
  if (add.length === 0) return false;
  writeFileAtomic(path, [...have, ...add].map((k) => `${k.keyId} ${k.created}\n`).join(''));
  return true;
}
