// Node keys (spec §7, issue 14): one Ed25519 key per node, created on first use.
//
//   <keysDir>/<node>.key   the private key as a JWK (RFC 8037: kty OKP, crv Ed25519, d, x),
//                          mode 0600, in a 0700 directory OUTSIDE the bus root (the env-paths
//                          config dir, tools/verbs/env.ts)
//   <root>/keys/<node>.pub the node's public key ids, one `<key id> <created ms>` a line,
//                          oldest first, so readers can find them by node id
//
// Rotation writes a new private key and appends its id: old signatures stay verifiable
// because a key id is the whole public key and the list only grows. These keys sign
// messages and delegations only; a NATS authentication key is never used here (spec §7).
//
// Why a JWK and not PKCS#8 PEM (what attend wrote first, still read and rewritten on first
// use): every `attend send` loads its key, and OpenSSL's PEM/DER decoders cost ~0.5 ms a
// key (~1.4 ms the first time in a process) where a raw JWK import costs ~0.05 ms; the file
// also carries the public half, so the key id needs no derivation (issue 14, Performance).

import type { KeyObject } from 'node:crypto';
import { appendFileSync, closeSync, fstatSync, openSync, rmSync, constants as fsc } from 'node:fs';
import { join, relative, isAbsolute } from 'node:path';
import { decodeKeyId, encodeKeyId } from '../../wire/sign.js';
import { readTextIfAny, writeFileAtomic, readAll } from '../store/atomic.js';
import { AttendError, EXIT, usageError } from '../../wire/errors.js';
import { FILE_MODE, ensureDir } from '../store/root.js';

type Crypto = typeof import('node:crypto');
let cryptoModule: Crypto | undefined;
/**
 * node:crypto loads on the first signature or check, not with this module: loading it costs
 * ~3 ms, which commands that never sign or verify (peers, whoami, status) do without.
 */
function crypto(): Crypto {
  return (cryptoModule ??= process.getBuiltinModule('node:crypto') as Crypto);
}

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
function checkKeysDir(keysDir: string, root: string): void {
  const rel = relative(root, keysDir);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
    throw envError(`the key directory ${keysDir} is inside the bus root ${root}`, 'set XDG_CONFIG_HOME (or ATTEND_HOME) so they are apart');
  }
}

export interface PublishedKey {
  keyId: string;
  created: number;
}

function readPublishedText(root: string, node: string): string {
  try {
    return readTextIfAny(publicKeysPath(root, node)) ?? '';
  } catch {
    return '';
  }
}

/** A node's published key ids, oldest first; [] when it has none. Lines that are not key ids are ignored. */
export function readPublishedKeys(root: string, node: string): PublishedKey[] {
  const out: PublishedKey[] = [];
  for (const line of readPublishedText(root, node).split('\n')) {
    const [keyId, created] = line.split(' ');
    if (keyId && decodeKeyId(keyId)) out.push({ keyId, created: Number(created) || 0 });
  }
  return out;
}

/** Append a key id to a node's published list unless it is there already. */
function publishKey(root: string, node: string, keyId: string, created: number): void {
  // Every send asks: a line that begins with the id is enough (ids are fixed-length base32),
  // without checking every other line's checksum.
  const text = readPublishedText(root, node);
  if (text.startsWith(`${keyId} `) || text.includes(`\n${keyId} `)) return;
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

interface KeyFile {
  key: KeyObject;
  keyId: string;
  /** Written by an older attend as PKCS#8 PEM: rewritten as a JWK once read. */
  pem: boolean;
}

const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

function keyIdOfX(x: string): string {
  return encodeKeyId(Uint8Array.from(Buffer.from(x, 'base64url')));
}

/** The public half as a JWK `x`, derived from the private key (the check that a file is whole). */
function xOf(key: KeyObject): string {
  return crypto().createPublicKey(key).export({ format: 'jwk' }).x as string;
}

/** Parse a key file's bytes; a string says why it is not an Ed25519 private key. */
function parseKeyFile(bytes: Buffer): KeyFile | string {
  const c = crypto();
  if (bytes.subarray(0, 11).toString('latin1') === '-----BEGIN ') {
    let key: KeyObject;
    try {
      key = c.createPrivateKey({ key: bytes, format: 'pem' });
    } catch {
      return 'not a private key';
    }
    if (key.asymmetricKeyType !== 'ed25519') return 'not Ed25519';
    return { key, keyId: keyIdOfX(xOf(key)), pem: true };
  }
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return 'neither a JWK nor PEM';
  }
  if (typeof jwk !== 'object' || jwk === null || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') return 'not an Ed25519 JWK';
  const { d, x } = jwk;
  if (typeof d !== 'string' || typeof x !== 'string' || !B64URL_32.test(d) || !B64URL_32.test(x)) return 'an Ed25519 JWK needs d and x of 32 bytes each';
  let key: KeyObject;
  try {
    key = c.createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d, x }, format: 'jwk' });
  } catch {
    return 'not a private key';
  }
  // The import takes x on trust; a file whose x is not d's public half would sign every
  // message under an id readers find wrong, so it is refused here, not held everywhere.
  if (xOf(key) !== x) return 'its public half (x) does not belong to its private key (d)';
  return { key, keyId: keyIdOfX(x), pem: false };
}

function jwkText(key: KeyObject): string {
  const { kty, crv, x, d } = key.export({ format: 'jwk' });
  return `${JSON.stringify({ kty, crv, x, d })}\n`;
}

/**
 * Read a private key file, refusing one that group or others can read or that is not a
 * plain file we own. Null when there is none.
 */
function readPrivateKeyFile(path: string, uid: number | undefined = process.getuid?.()): KeyFile | null {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw envError(`the key file ${path} is a symbolic link`, `remove it and run: attend keys rotate`);
    throw envError(`cannot read the key file ${path} (${code ?? 'error'})`);
  }
  let bytes: Buffer;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw envError(`the key file ${path} is not a regular file`);
    if (uid !== undefined && st.uid !== uid) throw envError(`the key file ${path} is owned by uid ${st.uid}, not you (uid ${uid})`);
    if ((st.mode & 0o077) !== 0) {
      throw envError(`the key file ${path} can be read by group or others (mode ${(st.mode & 0o777).toString(8)})`, `run: chmod 600 ${path}`);
    }
    bytes = readAll(fd, Math.min(st.size, 16 * 1024));
  } finally {
    closeSync(fd);
  }
  const parsed = parseKeyFile(bytes);
  if (typeof parsed === 'string') throw envError(`the key file ${path} is not an Ed25519 private key (${parsed})`, `move it away and run: attend keys rotate`);
  if (parsed.pem) {
    // The same key in the form that loads fast; the id file an older attend kept beside it
    // is not needed any more.
    writeFileAtomic(path, jwkText(parsed.key));
    rmSync(`${path}.id`, { force: true });
  }
  return parsed;
}

function writeNewKey(keysDir: string, node: string): KeyFile {
  ensureDir(keysDir);
  const { privateKey } = crypto().generateKeyPairSync('ed25519');
  writeFileAtomic(privateKeyPath(keysDir, node), jwkText(privateKey));
  return { key: privateKey, keyId: keyIdOfX(xOf(privateKey)), pem: false };
}

/** The node's key: loaded, or created (and published) on first use. */
export function loadOrCreateKey(opts: { keysDir: string; root: string; node: string; now: number }): NodeKey {
  checkKeysDir(opts.keysDir, opts.root);
  const path = privateKeyPath(opts.keysDir, opts.node);
  const { key: privateKey, keyId } = readPrivateKeyFile(path) ?? writeNewKey(opts.keysDir, opts.node);
  publishKey(opts.root, opts.node, keyId, opts.now);
  return { node: opts.node, keyId, privateKey, path };
}

/** A new key for the node; the old key id stays published so its signatures still verify. */
export function rotateKey(opts: { keysDir: string; root: string; node: string; now: number }): { old: string | null; key: NodeKey } {
  checkKeysDir(opts.keysDir, opts.root);
  const path = privateKeyPath(opts.keysDir, opts.node);
  let old: string | null = null;
  try {
    old = readPrivateKeyFile(path)?.keyId ?? null;
  } catch {
    // A key file we refuse to read is exactly what a rotation replaces.
  }
  if (old) publishKey(opts.root, opts.node, old, opts.now);
  const { key: privateKey, keyId } = writeNewKey(opts.keysDir, opts.node);
  publishKey(opts.root, opts.node, keyId, opts.now);
  return { old, key: { node: opts.node, keyId, privateKey, path } };
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
  const current = readPrivateKeyFile(path)?.keyId ?? null;
  return {
    node: opts.node,
    current,
    privateKey: path,
    published: readPublishedKeys(opts.root, opts.node).map((k) => ({ keyId: k.keyId, created: new Date(k.created).toISOString(), current: k.keyId === current })),
  };
}
