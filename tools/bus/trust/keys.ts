// Node keys (spec §7, issue 14; anchored in issue 20): one Ed25519 key per node, created on
// first use.
//
//   <keysDir>/<node>.key   the private key as a JWK (RFC 8037: kty OKP, crv Ed25519, d, x),
//                          mode 0600, in a 0700 directory OUTSIDE the bus root (the env-paths
//                          config dir, tools/verbs/env.ts)
//   <trust>/<node>.chain   the node's rotation record (anchors.ts; `trust/` beside the key
//                          directory): which keys are the node's
//   <root>/keys/<node>.pub a cache of the record's key ids for this bus, one `<key id>
//                          <created ms>` a line: what the relay lists, never an authority
//   <keysDir>/<node>.checked  what the last load checked, so the next one need not (key-check.ts)
//
// Rotation appends a link signed by the old key: old signatures stay verifiable because a
// key id is the whole public key and the record only grows. A key that is gone (deleted,
// lost) is replaced by a new one whose link says `reset`, so readers and `attend doctor` say
// the node has a new identity since then rather than taking it silently as the old one.
// These keys sign messages and delegations only; a NATS authentication key is never used
// here (spec §7).
//
// Why a JWK and not PKCS#8 PEM (what attend wrote first, still read and rewritten on first
// use): every `attend send` loads its key, and OpenSSL's PEM/DER decoders cost ~0.5 ms a
// key (~1.4 ms the first time in a process) where a raw JWK import costs ~0.05 ms; the file
// also carries the public half, so the key id needs no derivation (issue 14, Performance).

import type { KeyObject } from 'node:crypto';
import { appendFileSync, closeSync, fstatSync, openSync, rmSync, constants as fsc } from 'node:fs';
import { join, relative, isAbsolute } from 'node:path';
import { type ChainLink, type LinkKind, rotationSigningBytes } from '../../wire/key-chain.js';
import { decodeKeyId, encodeKeyId } from '../../wire/sign.js';
import { readTextIfAny, writeFileAtomic, readAll } from '../store/atomic.js';
import { AttendError, EXIT, usageError } from '../../wire/errors.js';
import { FILE_MODE, ensureDir } from '../store/root.js';
import { anchorOf, appendLink, chainPath, openKeyDirectory, recordLists, recordText, trustDirOf } from './anchors.js';
import { crypto, signBytes } from './ed25519.js';
import { type KeyCheck, isStamp, keyCheckPath, pathStamp, readKeyCheck, stampOf, writeKeyCheck } from './key-check.js';

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

/**
 * The key and trust directories must not be inside the bus root: the root is shared, the
 * private keys are not, and the records are what the bus must not be able to change.
 */
function checkKeysDir(keysDir: string, root: string): void {
  for (const [dir, which] of [[keysDir, 'key directory'], [trustDirOf(keysDir), 'trust directory']] as const) {
    if (within(root, dir)) {
      throw envError(`the ${which} ${dir} is inside the bus root ${root}`, 'set XDG_CONFIG_HOME (or ATTEND_HOME) so they are apart');
    }
  }
}

/** An absolute path without `.`, `..`, empty segments or a trailing slash. */
const NORMAL_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/]+)+$/;

/** Is `dir` the directory `root` or under it? (Every send asks: paths as attend makes them are compared as strings.) */
function within(root: string, dir: string): boolean {
  if (NORMAL_PATH.test(root) && NORMAL_PATH.test(dir)) return dir === root || dir.startsWith(`${root}/`);
  const rel = relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
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

/** Append a key id to a node's published list unless it is there already; true when it was. */
function publishKey(root: string, node: string, keyId: string, created: number): boolean {
  // A line that begins with the id is enough (ids are fixed-length base32), without checking
  // every other line's checksum.
  const text = readPublishedText(root, node);
  if (text.startsWith(`${keyId} `) || text.includes(`\n${keyId} `)) return true;
  ensureDir(publishedKeysDir(root));
  // One short append (O_APPEND) per key: two processes publishing at once both land.
  appendFileSync(publicKeysPath(root, node), `${keyId} ${created}\n`, { mode: FILE_MODE });
  return false;
}

export interface NodeKey {
  node: string;
  keyId: string;
  privateKey: KeyObject;
  path: string;
  /** Set when the node's key was gone and this one replaced it (a new identity): when. */
  replaced?: number;
}

interface KeyFile {
  key: KeyObject;
  keyId: string;
  /** The public half (JWK x). */
  x: string;
  /** stampOf the file as read ('' when not read from one as it is now). */
  stamp: string;
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

/**
 * Parse a key file's bytes; a string says why it is not an Ed25519 private key. `known` is
 * what the last load found (key-check.ts): a public half whose key id is known is not encoded
 * again, and in a file stamped as it was then, not derived from the private half again.
 */
function parseKeyFile(bytes: Buffer, stamp: string, known?: KeyCheck): KeyFile | string {
  const c = crypto();
  if (bytes.subarray(0, 11).toString('latin1') === '-----BEGIN ') {
    let key: KeyObject;
    try {
      key = c.createPrivateKey({ key: bytes, format: 'pem' });
    } catch {
      return 'not a private key';
    }
    if (key.asymmetricKeyType !== 'ed25519') return 'not Ed25519';
    const x = xOf(key);
    return { key, keyId: keyIdOfX(x), x, stamp: '', pem: true };
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
  const same = known?.x === x;
  if (!(same && known.file === stamp && isStamp(stamp)) && xOf(key) !== x) return 'its public half (x) does not belong to its private key (d)';
  return { key, keyId: same ? known.keyId : keyIdOfX(x), x, stamp, pem: false };
}

function jwkText(key: KeyObject): string {
  const { kty, crv, x, d } = key.export({ format: 'jwk' });
  return `${JSON.stringify({ kty, crv, x, d })}\n`;
}

/**
 * Read a private key file, refusing one that group or others can read or that is not a
 * plain file we own. Null when there is none.
 */
function readPrivateKeyFile(path: string, known?: KeyCheck, uid: number | undefined = process.getuid?.()): KeyFile | null {
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
  let stamp: string;
  try {
    const st = fstatSync(fd);
    stamp = stampOf(st);
    if (!st.isFile()) throw envError(`the key file ${path} is not a regular file`);
    if (uid !== undefined && st.uid !== uid) throw envError(`the key file ${path} is owned by uid ${st.uid}, not you (uid ${uid})`);
    if ((st.mode & 0o077) !== 0) {
      throw envError(`the key file ${path} can be read by group or others (mode ${(st.mode & 0o777).toString(8)})`, `run: chmod 600 ${path}`);
    }
    bytes = readAll(fd, Math.min(st.size, 16 * 1024));
  } finally {
    closeSync(fd);
  }
  const parsed = parseKeyFile(bytes, stamp, known);
  if (typeof parsed === 'string') throw envError(`the key file ${path} is not an Ed25519 private key (${parsed})`, `move it away and run: attend keys rotate`);
  if (parsed.pem) {
    // The same key in the form that loads fast; the id file an older attend kept beside it
    // is not needed any more.
    writeFileAtomic(path, jwkText(parsed.key));
    rmSync(`${path}.id`, { force: true });
  }
  return parsed;
}

/**
 * A fresh key. Generated straight to JWK and imported from it rather than exported from the
 * generated KeyObject: on Node 20 exporting a just-generated key as a JWK can deadlock the
 * process (the export holds the key's mutex while it allocates, a GC then finalizes the
 * finished key-generation job, whose destructor takes the same mutex; seen in a process that
 * made 200 keys). The imported key shares nothing with the job.
 */
function newKey(): KeyFile {
  const { privateKey: jwk } = crypto().generateKeyPairSync('ed25519', { publicKeyEncoding: { format: 'jwk' }, privateKeyEncoding: { format: 'jwk' } });
  const { x, d } = jwk as unknown as { x: string; d: string };
  const key = crypto().createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x, d }, format: 'jwk' });
  return { key, keyId: keyIdOfX(x), x, stamp: '', pem: false };
}

/** A link of the record for `key`, signed by `signer` (the key before it for `rotated`, else itself). */
function linkFor(node: string, prev: string, kind: LinkKind, key: KeyFile, created: number, signer: KeyObject): ChainLink {
  const unsigned = { keyId: key.keyId, created, kind };
  return { ...unsigned, sig: signBytes(signer, rotationSigningBytes(node, prev, unsigned)) };
}

/** The last key id the raw record lists, '' when none. */
function lastListed(text: string | null): string {
  const lines = (text ?? '').split('\n').filter((l) => l.length > 0);
  return lines[lines.length - 1]?.split(' ')[0] ?? '';
}

interface KeyOptions {
  keysDir: string;
  root: string;
  node: string;
  now: number;
}

/**
 * The node's key: loaded, or created on first use; anchored in the node's record and cached
 * in the bus's list. A node whose key is gone (its record or the bus's list shows it had one)
 * gets a new key whose link says `reset`: a new identity, which readers and `attend doctor`
 * show (issue 20 §2: a key that disappears is not silently replaced).
 *
 * What the last load found (key-check.ts) spares this one the record and the list while
 * their stamps are unchanged; the directories and the key file are checked every time.
 */
export function loadOrCreateKey(opts: KeyOptions): NodeKey {
  checkKeysDir(opts.keysDir, opts.root);
  openKeyDirectory(opts.keysDir);
  const path = privateKeyPath(opts.keysDir, opts.node);
  const checkPath = keyCheckPath(opts.keysDir, opts.node);
  const known = readKeyCheck(checkPath);
  // Each stamp is taken before its file is read: a change after it makes the next load read again.
  const recordStamp = pathStamp(chainPath(opts.keysDir, opts.node));
  const listStamp = pathStamp(publicKeysPath(opts.root, opts.node));
  let file = readPrivateKeyFile(path, known ?? undefined);
  // What the check file says still holds: the same key, and the file stamped as it was then.
  const next: KeyCheck | null = file === null ? null : { file: file.stamp, x: file.x, keyId: file.keyId, record: '', list: '' };
  const holds = (was: string | undefined, now: string) => next !== null && known?.keyId === next.keyId && was === now && isStamp(now);
  let replaced: number | undefined;
  if (file === null) {
    const record = recordText(opts.keysDir, opts.node);
    const lost = record !== null || readPublishedKeys(opts.root, opts.node).length > 0;
    file = newKey();
    // The key file first: a crash before the link leaves a key without a record, which the
    // next load anchors (below) rather than losing.
    writeFileAtomic(path, jwkText(file.key));
    appendLink(opts.keysDir, opts.node, linkFor(opts.node, lastListed(record), lost ? 'reset' : 'first', file, opts.now, file.key));
    if (lost) replaced = opts.now;
  } else if (holds(known?.record, recordStamp)) {
    next!.record = recordStamp;
  } else {
    const record = recordText(opts.keysDir, opts.node);
    if (recordLists(record, file.keyId)) next!.record = recordStamp;
    else {
      // A key the record does not list: one an attend from before the record made (its first
      // link), or one the record never had, or that replaced what the bus knew (a new identity).
      const kind = legacyKind(opts.root, opts.node, record, file.keyId);
      const created = readPublishedKeys(opts.root, opts.node).find((k) => k.keyId === file!.keyId)?.created ?? opts.now;
      appendLink(opts.keysDir, opts.node, linkFor(opts.node, lastListed(record), kind, file, created, file.key));
      if (kind === 'reset') replaced = opts.now;
    }
  }
  if (holds(known?.list, listStamp)) next!.list = listStamp;
  else if (publishKey(opts.root, opts.node, file.keyId, opts.now) && next !== null) next.list = listStamp;
  if (next !== null && (known === null || known.file !== next.file || known.x !== next.x || known.keyId !== next.keyId || known.record !== next.record || known.list !== next.list)) writeKeyCheck(checkPath, next);
  return { node: opts.node, keyId: file.keyId, privateKey: file.key, path, ...(replaced !== undefined ? { replaced } : {}) };
}

/**
 * How a key the record does not list enters it: `first` for the key an attend from before the
 * record left (no record yet, and the bus's list has it or nothing), else `reset`: the record
 * knew other keys, or the bus knew the node by other keys only.
 */
function legacyKind(root: string, node: string, record: string | null, keyId: string): LinkKind {
  if (record !== null) return 'reset';
  const listed = readPublishedKeys(root, node);
  return listed.length === 0 || listed.some((k) => k.keyId === keyId) ? 'first' : 'reset';
}

/**
 * For a reader: anchor the key an attend from before the record left in the key directory
 * (a key file, no record), so what that node signed then still verifies. False when there is
 * nothing to anchor or it cannot be read.
 */
export function anchorLegacyKey(opts: { keysDir: string; root: string; node: string }): boolean {
  if (!NODE_FILE.test(opts.node)) return false;
  try {
    if (recordText(opts.keysDir, opts.node) !== null) return false;
    const file = readPrivateKeyFile(privateKeyPath(opts.keysDir, opts.node));
    if (file === null) return false;
    const created = readPublishedKeys(opts.root, opts.node).find((k) => k.keyId === file.keyId)?.created ?? 0;
    appendLink(opts.keysDir, opts.node, linkFor(opts.node, '', legacyKind(opts.root, opts.node, null, file.keyId), file, created, file.key));
    return true;
  } catch {
    return false;
  }
}

/**
 * A new key for the node, linked to the old one (signed by it) so old signatures still verify
 * and readers see one identity; without a readable old key the link says `reset`.
 */
export function rotateKey(opts: KeyOptions): { old: string | null; key: NodeKey } {
  checkKeysDir(opts.keysDir, opts.root);
  openKeyDirectory(opts.keysDir);
  const path = privateKeyPath(opts.keysDir, opts.node);
  let old: KeyFile | null = null;
  try {
    old = readPrivateKeyFile(path);
  } catch {
    // A key file we refuse to read is exactly what a rotation replaces.
  }
  let record = recordText(opts.keysDir, opts.node);
  if (old !== null && !recordLists(record, old.keyId)) {
    // The old key is not in the record yet (made before it): anchored first, so what it
    // signed keeps verifying and the new key can be linked to it.
    appendLink(opts.keysDir, opts.node, linkFor(opts.node, lastListed(record), record === null ? 'first' : 'reset', old, opts.now, old.key));
    record = recordText(opts.keysDir, opts.node);
  }
  const prev = lastListed(record);
  const next = newKey();
  // The link first: a crash before the key file is written leaves the old key in use and
  // still in the record.
  const chained = old !== null && prev === old.keyId;
  appendLink(opts.keysDir, opts.node, chained ? linkFor(opts.node, prev, 'rotated', next, opts.now, old!.key) : linkFor(opts.node, prev, record === null ? 'first' : 'reset', next, opts.now, next.key));
  writeFileAtomic(path, jwkText(next.key));
  if (old) publishKey(opts.root, opts.node, old.keyId, opts.now);
  publishKey(opts.root, opts.node, next.keyId, opts.now);
  return { old: old?.keyId ?? null, key: { node: opts.node, keyId: next.keyId, privateKey: next.key, path } };
}

export interface KeysReport {
  node: string;
  /** The key this node signs with now, or null when it has none yet (created on first send). */
  current: string | null;
  privateKey: string;
  /** The rotation record: which keys readers take as this node's. */
  record: string;
  /** Every key the record vouches for, oldest first (old ones verify old messages). */
  published: { keyId: string; created: string; current: boolean; newIdentitySince?: string }[];
  /** Why all or part of the record is refused, when it is. */
  problem?: string;
}

/** `attend keys`: the caller's key and what readers take as its keys. Never creates a key. */
export function describeKeys(opts: { keysDir: string; root: string; node: string }): KeysReport {
  checkKeysDir(opts.keysDir, opts.root);
  const path = privateKeyPath(opts.keysDir, opts.node);
  const current = readPrivateKeyFile(path)?.keyId ?? null;
  const anchor = anchorOf(opts.keysDir, opts.node);
  return {
    node: opts.node,
    current,
    privateKey: path,
    record: chainPath(opts.keysDir, opts.node),
    published: anchor.keys.map((k) => ({
      keyId: k.keyId,
      created: new Date(k.created).toISOString(),
      current: k.keyId === current,
      ...(k.newSince !== undefined ? { newIdentitySince: new Date(k.newSince).toISOString() } : {}),
    })),
    ...(anchor.problem !== undefined ? { problem: anchor.problem } : {}),
  };
}
