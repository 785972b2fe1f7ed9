// Node keys (spec §7, issue 14): one Ed25519 key per node, created on first use.
//
//   <keysDir>/<node>.key   the private key (PKCS#8 PEM), mode 0600, in a 0700 directory
//                          OUTSIDE the bus root (the env-paths config dir, tools/cli/env.ts)
//   <root>/keys/<node>.pub the node's public key ids, one `<key id> <created ms>` a line,
//                          oldest first, so readers can find them by node id
//
// Rotation writes a new private key and appends its id: old signatures stay verifiable
// because a key id is the whole public key and the list only grows. These keys sign
// messages and delegations only; a NATS authentication key is never used here (spec §7).

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign as edSign, verify as edVerify } from 'node:crypto';
import { appendFileSync, closeSync, fstatSync, lstatSync, openSync, readFileSync, constants as fsc } from 'node:fs';
import { join, relative, isAbsolute } from 'node:path';
import { decodeKeyId, encodeKeyId } from '../wire/sign.js';
import { writeFileAtomic, readAll } from './atomic.js';
import { AttendError, EXIT, usageError } from './errors.js';
import { FILE_MODE, ensureDir } from './root.js';

const NODE_FILE = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,127}$/;

export function publishedKeysDir(root: string): string {
  return join(root, 'keys');
}

function nodeFile(node: string): string {
  if (!NODE_FILE.test(node)) throw usageError(`'${node.slice(0, 40)}' is not a node id that can have a key`);
  return node;
}

export function privateKeyPath(keysDir: string, node: string): string {
  return join(keysDir, `${nodeFile(node)}.key`);
}

export function publicKeysPath(root: string, node: string): string {
  return join(publishedKeysDir(root), `${nodeFile(node)}.pub`);
}

const envError = (msg: string, hint?: string) => new AttendError(msg, EXIT.environment, hint);

/** The keys dir must not be inside the bus root: the root is shared, the private key is not. */
export function checkKeysDir(keysDir: string, root: string): void {
  const rel = relative(root, keysDir);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
    throw envError(`the key directory ${keysDir} is inside the bus root ${root}`, 'set XDG_CONFIG_HOME (or ATTEND_HOME) so they are apart');
  }
}

export interface PublishedKey {
  keyId: string;
  created: number;
}

/** A node's published key ids, oldest first; [] when it has none. Lines that are not key ids are ignored. */
export function readPublishedKeys(root: string, node: string): PublishedKey[] {
  let text: string;
  try {
    text = readFileSync(publicKeysPath(root, node), 'utf8');
  } catch {
    return [];
  }
  const out: PublishedKey[] = [];
  for (const line of text.split('\n')) {
    const [keyId, created] = line.split(' ');
    if (keyId && decodeKeyId(keyId)) out.push({ keyId, created: Number(created) || 0 });
  }
  return out;
}

/** Append a key id to a node's published list unless it is there already. */
export function publishKey(root: string, node: string, keyId: string, created: number): void {
  if (readPublishedKeys(root, node).some((k) => k.keyId === keyId)) return;
  ensureDir(publishedKeysDir(root));
  // One short append (O_APPEND) per key: two processes publishing at once both land.
  appendFileSync(publicKeysPath(root, node), `${keyId} ${created}\n`, { mode: FILE_MODE });
}

export interface NodeKey {
  node: string;
  keyId: string;
  privateKey: KeyObject;
  path: string;
}

function keyIdOf(pub: KeyObject): string {
  const der = pub.export({ format: 'der', type: 'spki' });
  return encodeKeyId(Uint8Array.from(der.subarray(der.length - 32)));
}

/**
 * Read a private key file, refusing one that group or others can read or that is not a
 * plain file we own. Null when there is none.
 */
export function readPrivateKey(path: string, uid: number | undefined = process.getuid?.()): KeyObject | null {
  return readPrivateKeyFile(path, uid)?.key ?? null;
}

function readPrivateKeyFile(path: string, uid: number | undefined = process.getuid?.()): { key: KeyObject; pem: Buffer } | null {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw envError(`the key file ${path} is a symbolic link`, `remove it and run: attend keys rotate`);
    throw envError(`cannot read the key file ${path} (${code ?? 'error'})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw envError(`the key file ${path} is not a regular file`);
    if (uid !== undefined && st.uid !== uid) throw envError(`the key file ${path} is owned by uid ${st.uid}, not you (uid ${uid})`);
    if ((st.mode & 0o077) !== 0) {
      throw envError(`the key file ${path} can be read by group or others (mode ${(st.mode & 0o777).toString(8)})`, `run: chmod 600 ${path}`);
    }
    try {
      const pem = readAll(fd, st.size);
      const key = createPrivateKey({ key: pem, format: 'pem' });
      if (key.asymmetricKeyType !== 'ed25519') throw new Error('not Ed25519');
      return { key, pem };
    } catch {
      throw envError(`the key file ${path} is not an Ed25519 private key`, `move it away and run: attend keys rotate`);
    }
  } finally {
    closeSync(fd);
  }
}


/**
 * The key id beside the private key (`<node>.key.id`, `<key id> <sha256 of the key file>`):
 * deriving it costs a public-key export and a base32 encode on every send (issue 14
 * Performance). It is used only while the hash matches the key file, so a crash between the
 * two writes, or an edited file, costs one derivation, never a wrong id.
 */
function cachedKeyId(path: string, privateKey: KeyObject, pem: Buffer): string {
  const digest = createHash('sha256').update(pem).digest('hex');
  try {
    const [id, hash] = readFileSync(`${path}.id`, 'utf8').trim().split(' ');
    if (id && hash === digest && decodeKeyId(id)) return id;
  } catch {
    // first use, or written by an older attend
  }
  const id = keyIdOf(createPublicKey(privateKey));
  writeFileAtomic(`${path}.id`, `${id} ${digest}\n`);
  return id;
}

function writeNewKey(keysDir: string, node: string): { key: KeyObject; pem: Buffer } {
  ensureDir(keysDir);
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = Buffer.from(privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
  writeFileAtomic(privateKeyPath(keysDir, node), pem);
  return { key: privateKey, pem };
}

/** The node's key: loaded, or created (and published) on first use. */
export function loadOrCreateKey(opts: { keysDir: string; root: string; node: string; now: number }): NodeKey {
  checkKeysDir(opts.keysDir, opts.root);
  const path = privateKeyPath(opts.keysDir, opts.node);
  const { key: privateKey, pem } = readPrivateKeyFile(path) ?? writeNewKey(opts.keysDir, opts.node);
  const keyId = cachedKeyId(path, privateKey, pem);
  publishKey(opts.root, opts.node, keyId, opts.now);
  return { node: opts.node, keyId, privateKey, path };
}

/** A new key for the node; the old key id stays published so its signatures still verify. */
export function rotateKey(opts: { keysDir: string; root: string; node: string; now: number }): { old: string | null; key: NodeKey } {
  checkKeysDir(opts.keysDir, opts.root);
  const path = privateKeyPath(opts.keysDir, opts.node);
  let old: string | null = null;
  try {
    const prev = readPrivateKey(path);
    if (prev) old = keyIdOf(createPublicKey(prev));
  } catch {
    // A key file we refuse to read is exactly what a rotation replaces.
  }
  if (old) publishKey(opts.root, opts.node, old, opts.now);
  const { key: privateKey, pem } = writeNewKey(opts.keysDir, opts.node);
  const keyId = cachedKeyId(path, privateKey, pem);
  publishKey(opts.root, opts.node, keyId, opts.now);
  return { old, key: { node: opts.node, keyId, privateKey, path } };
}

export function signBytes(key: KeyObject, bytes: Uint8Array): string {
  return edSign(null, bytes, key).toString('base64');
}

const publicKeyCache = new Map<string, KeyObject>();

/** Check a base64 signature against the public key a key id names. */
export function verifyBytes(keyId: string, bytes: Uint8Array, sigB64: string): boolean {
  let pub = publicKeyCache.get(keyId);
  if (!pub) {
    const raw = decodeKeyId(keyId);
    if (!raw) return false;
    pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
    publicKeyCache.set(keyId, pub);
  }
  const sig = Buffer.from(sigB64, 'base64');
  if (sig.length !== 64) return false;
  return edVerify(null, bytes, pub, sig);
}

/** Is the published key list for a node present at all (does this node sign)? */
export function nodeHasKeys(root: string, node: string): boolean {
  try {
    return lstatSync(publicKeysPath(root, node)).isFile();
  } catch {
    return false;
  }
}

export interface KeysReport {
  node: string;
  /** The key this node signs with now, or null when it has none yet (created on first send). */
  current: string | null;
  privateKey: string;
  /** Every key id published for the node, oldest first (old ones verify old messages). */
  published: { keyId: string; created: string; current: boolean }[];
}

/** `attend keys`: the caller's key and what readers can find for it. Never creates a key. */
export function describeKeys(opts: { keysDir: string; root: string; node: string }): KeysReport {
  checkKeysDir(opts.keysDir, opts.root);
  const path = privateKeyPath(opts.keysDir, opts.node);
  const priv = readPrivateKey(path);
  const current = priv ? keyIdOf(createPublicKey(priv)) : null;
  return {
    node: opts.node,
    current,
    privateKey: path,
    published: readPublishedKeys(opts.root, opts.node).map((k) => ({ keyId: k.keyId, created: new Date(k.created).toISOString(), current: k.keyId === current })),
  };
}
