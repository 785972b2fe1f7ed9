// Local keys anchored outside the bus (issue 20, Must have 2). Which keys are a node's of this
// machine is decided by the node's rotation record, kept beside the key directory in the
// user's config dir, never by anything under the bus root:
//
//   <config>/attend/keys/<node>.key     the private key (keys.ts)
//   <config>/attend/trust/<node>.chain  the rotation record (tools/wire/key-chain.ts): each key
//                                       after the first signed by the one before, append-only
//   <root>/keys/<node>.pub              a cache of the record for this bus (the relay's list of
//                                       nodes, older readers); never read to decide whose a key is
//
// So a process that can write the bus (a worker appending its own key id to the lead's
// `.pub`) cannot make a key the lead's; it would have to write the config dir. The records
// are public and the keys are not, so they are two directories: a sandbox that hides the key
// directory from a session's commands (issue 20 §7) still lets them read the records, and
// neither is writable from inside it. Both must be directories of their own (not symbolic
// links), the user's, mode 0700: anything else is refused like a key file others can read.
//
// Readers take only a bus root (readMessage and its ~40 callers), so where that root's key
// directory is comes from the composition root once per process (useKeyDirectory, called
// by the verbs' context and by a signer), like the root itself.

import { closeSync, fstatSync, fsyncSync, lstatSync, openSync, readFileSync, readdirSync, statSync, writeSync, constants as fsc } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Chain, type ChainKey, type ChainLink, formatLink, readChain } from '../../wire/key-chain.js';
import { AttendError, EXIT } from '../../wire/errors.js';
import { readAll, syncDirs, writeFileAtomic } from '../store/atomic.js';
import { FILE_MODE, ensureDir } from '../store/root.js';
import { verifyBytes } from './ed25519.js';
import { markTrustChanged } from './stamp.js';

const envError = (msg: string, hint?: string) => new AttendError(msg, EXIT.environment, hint);

// --- Which key directory anchors a bus's local keys in this process ----------------------

const directories = new Map<string, string>();

/** This process reads the local keys of the bus at `root` from `keysDir`. */
export function useKeyDirectory(root: string, keysDir: string): void {
  directories.set(root, keysDir);
}

/** Where the bus at `root` has its local keys, as this process was told; undefined when never told. */
export function keyDirectoryOf(root: string): string | undefined {
  return directories.get(root);
}

// --- The directories themselves -------------------------------------------------------------

/** Where the records are: `trust/` beside the key directory (`<config>/attend/keys`). */
export function trustDirOf(keysDir: string): string {
  return join(dirname(keysDir), 'trust');
}

type Which = 'key directory' | 'trust directory';

/** Why a directory cannot be trusted; 'absent' when it does not exist yet; null when it is fine. */
function inspectDirectory(dir: string, which: Which, uid: number | undefined): AttendError | 'absent' | null {
  let st;
  try {
    st = lstatSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'absent' : envError(`cannot read the ${which} ${dir} (${code ?? 'error'})`);
  }
  if (st.isSymbolicLink()) return envError(`the ${which} ${dir} is a symbolic link`, `make it a directory of its own (mkdir -m 700) and move its files into it`);
  if (!st.isDirectory()) return envError(`the ${which} ${dir} is not a directory`);
  if (uid !== undefined && st.uid !== uid) return envError(`the ${which} ${dir} is owned by uid ${st.uid}, not you (uid ${uid})`);
  if ((st.mode & 0o077) !== 0) return envError(`the ${which} ${dir} is open to group or others (mode ${(st.mode & 0o777).toString(8)})`, `run: chmod 700 ${dir}`);
  return null;
}

function problemOf(dir: string, which: Which, uid: number | undefined): AttendError | null {
  const r = inspectDirectory(dir, which, uid);
  return r === 'absent' ? null : r;
}

/** Why the key directory or the trust directory beside it cannot be trusted, or null (also when they do not exist yet). */
export function keyDirectoryProblem(keysDir: string, uid: number | undefined = process.getuid?.()): AttendError | null {
  return problemOf(keysDir, 'key directory', uid) ?? problemOf(trustDirOf(keysDir), 'trust directory', uid);
}

function openDirectory(dir: string, which: Which, uid: number | undefined): void {
  let r = inspectDirectory(dir, which, uid);
  if (r === 'absent') {
    ensureDir(dir);
    r = inspectDirectory(dir, which, uid);
  }
  if (r !== null && r !== 'absent') throw r;
}

/** The key directory and the trust directory for writing: made 0700 when missing, refused (exit 5) when not private. */
export function openKeyDirectory(keysDir: string, uid: number | undefined = process.getuid?.()): void {
  openDirectory(keysDir, 'key directory', uid);
  openDirectory(trustDirOf(keysDir), 'trust directory', uid);
}

// --- The rotation record ---------------------------------------------------------------------

export function chainPath(keysDir: string, node: string): string {
  return join(trustDirOf(keysDir), `${node}.chain`);
}

/**
 * The record's text, null when there is none; a string problem when it may not be read.
 * `known`, when given, is asked with the record's stat first (its inode, size, times); true
 * means the caller already has what this text says, and it is not read ({ known }).
 */
function readRecordText(
  path: string,
  uid: number | undefined = process.getuid?.(),
  known?: (stamp: string) => boolean,
): { text: string | null; stamp?: string } | { problem: string } | { known: string } {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { text: null };
    return { problem: code === 'ELOOP' ? `the key record ${path} is a symbolic link` : `cannot read the key record ${path} (${code ?? 'error'})` };
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    if (!st.isFile()) return { problem: `the key record ${path} is not a regular file` };
    if (uid !== undefined && st.uid !== BigInt(uid)) return { problem: `the key record ${path} is owned by uid ${st.uid}, not you` };
    if ((st.mode & 0o022n) !== 0n) return { problem: `the key record ${path} can be written by group or others` };
    // The change time too: a hand edit that puts the size and mtime back still moves it.
    const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    if (known?.(stamp)) return { known: stamp };
    return { text: readAll(fd, Number(st.size < 1048576n ? st.size : 1048576n)).toString('utf8'), stamp };
  } finally {
    closeSync(fd);
  }
}

/** The record's raw text for a writer that only asks whether a key is in it (no checks of links). */
export function recordText(keysDir: string, node: string): string | null {
  const r = readRecordText(chainPath(keysDir, node));
  return 'text' in r ? r.text : null;
}

/** Does the raw record list this key id? (Ids are fixed-length base32, so a line's start is enough.) */
export function recordLists(text: string | null, keyId: string): boolean {
  return text !== null && (text.startsWith(`${keyId} `) || text.includes(`\n${keyId} `));
}

/** Append one link: one short write with O_APPEND, synced (the record is what readers trust). */
export function appendLink(keysDir: string, node: string, link: ChainLink): void {
  const path = chainPath(keysDir, node);
  const fd = openSync(path, fsc.O_WRONLY | fsc.O_APPEND | fsc.O_CREAT | fsc.O_NOFOLLOW, FILE_MODE);
  try {
    const st = fstatSync(fd);
    writeSync(fd, formatLink(link));
    fsyncSync(fd);
    // A record made just now: its name must survive a power cut too.
    if (st.size === 0) syncDirs([trustDirOf(keysDir)]);
  } finally {
    closeSync(fd);
  }
  // This process reads what it wrote at once.
  records.delete(`${keysDir}\n${node}`);
  // A key appeared or rotated: verdicts kept under the old stamp are decided again.
  markTrustChanged(trustDirOf(keysDir));
}

// --- Anchored keys, as readers ask for them ---------------------------------------------------

export interface Anchor {
  /** The keys the record vouches for, oldest first; [] when none. */
  keys: ChainKey[];
  /** A record exists for the node (even one refused or broken): the node is this machine's. */
  recorded: boolean;
  /** Why all or part of the record is refused (a broken link, a trust directory that is not private). */
  problem?: string;
}

/**
 * A record is read again when it changed (its stat) and a key asked for is not in it, or
 * after STALE_MS when nothing in particular is asked for, so a long-running sensor sees a
 * rotation or a node's first key soon; each read checks every link (an Ed25519 check each).
 */
const STALE_MS = 2_000;

interface Cached {
  anchor: Anchor;
  stamp: string;
  at: number;
}

const records = new Map<string, Cached>();
const dirChecks = new Map<string, { at: number; problem: string | null }>();

function stampOf(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : '-';
}

/**
 * Why the records cannot be trusted now (cached for STALE_MS), or null. Readers read only the
 * trust directory: a reader inside a sandbox that hides the key directory still verifies.
 */
export function dirProblem(keysDir: string, now = Date.now()): string | null {
  const hit = dirChecks.get(keysDir);
  if (hit && now - hit.at < STALE_MS) return hit.problem;
  const problem = problemOf(trustDirOf(keysDir), 'trust directory', process.getuid?.())?.message ?? null;
  dirChecks.set(keysDir, { at: now, problem });
  return problem;
}

function anchorFrom(node: string, path: string): Anchor {
  const r = readRecordText(path);
  if ('problem' in r) return { keys: [], recorded: true, problem: r.problem };
  // (Asked without `known`, the text is always read.)
  if (!('text' in r) || r.text === null) return { keys: [], recorded: false };
  const chain: Chain = readChain(node, r.text, verifyBytes);
  return { keys: chain.keys, recorded: true, ...(chain.broken ? { problem: `the key record of ${node} is broken at line ${chain.broken.line}: ${chain.broken.reason}` } : {}) };
}

/**
 * The keys of this machine's node `node`, from its record in `keysDir`, checked link by link.
 * Cost: one stat when the cached answer may be stale, one read and a check per link when the
 * record changed; never a listing, so it does not grow with the number of nodes or hosts.
 */
export function anchorOf(keysDir: string, node: string, wanted?: string, now = Date.now()): Anchor {
  const problem = dirProblem(keysDir, now);
  if (problem !== null) return { keys: [], recorded: true, problem };
  const path = chainPath(keysDir, node);
  const k = `${keysDir}\n${node}`;
  const hit = records.get(k);
  if (hit) {
    const fresh = wanted !== undefined ? hit.anchor.keys.some((x) => x.keyId === wanted) : now - hit.at < STALE_MS;
    if (fresh) return hit.anchor;
  }
  const stamp = stampOf(path);
  if (hit && hit.stamp === stamp) {
    hit.at = now;
    return hit.anchor;
  }
  const anchor = anchorFrom(node, path);
  records.set(k, { anchor, stamp, at: now });
  return anchor;
}

/** anchorOf for the bus at `root`, through the key directory this process was told it has. */
export function localAnchor(root: string, node: string, wanted?: string): Anchor {
  const keysDir = keyDirectoryOf(root);
  if (keysDir === undefined) return { keys: [], recorded: false, problem: 'this process was not told where the key directory is' };
  return anchorOf(keysDir, node, wanted);
}

export interface KeysHealth {
  /** The key or trust directory cannot be trusted (a symbolic link, not the user's, open to others). */
  problem: AttendError | null;
  /** How many nodes have a record here. */
  nodes: number;
  /** Records with a link that does not hold: from there on their keys are refused. */
  broken: { node: string; reason: string }[];
  /** Nodes whose key was replaced without the old one signing: a new identity since `since`. */
  resets: { node: string; since: number }[];
}

// --- doctor's check of every record ------------------------------------------------------
//
//   <trust dir>/.checked   {"v":1,"records":{"<node>":{"stamp":"…","broken":"…","reset":ms},…}}
//
// What keysHealth found in each record, under the record's stat when it was read (inode,
// size, mtime and ctime, ns): a record whose stat is the same is not read and checked again,
// so `attend doctor` costs a stat per record, not an Ed25519 check per link, and loads no
// node:crypto when nothing changed (issue 22, Performance: doctor on a machine with many
// sessions, each a node with a record). Derived, like the listing cache: readers never use
// it (anchorOf checks every link itself); one that does not parse is empty; where the trust
// directory cannot be written (a sandbox) doctor checks every record each time.

const CHECKED = '.checked';

interface Checked {
  stamp: string;
  broken?: string;
  reset?: number;
}

function readChecked(trustDir: string): Record<string, Checked> {
  try {
    const o = JSON.parse(readFileSync(join(trustDir, CHECKED), 'utf8')) as { v?: unknown; records?: unknown };
    if (o.v === 1 && typeof o.records === 'object' && o.records !== null) return o.records as Record<string, Checked>;
  } catch {
    // none yet, or torn: check every record
  }
  return {};
}

/** `attend doctor`: the key and trust directories and every record (reads them all; for doctor, not readers). */
export function keysHealth(keysDir: string): KeysHealth {
  const problem = keyDirectoryProblem(keysDir);
  const out: KeysHealth = { problem, nodes: 0, broken: [], resets: [] };
  if (problem) return out;
  const trustDir = trustDirOf(keysDir);
  let names: string[];
  try {
    names = readdirSync(trustDir).filter((n) => n.endsWith('.chain') && !n.startsWith('.'));
  } catch {
    return out;
  }
  const before = readChecked(trustDir);
  const now: Record<string, Checked> = {};
  let changed = false;
  for (const n of names.sort()) {
    const node = n.slice(0, -'.chain'.length);
    const kept = Object.hasOwn(before, node) ? before[node] : undefined;
    const r = readRecordText(join(trustDir, n), undefined, (stamp) => kept?.stamp === stamp);
    out.nodes++;
    if ('problem' in r) {
      out.broken.push({ node, reason: r.problem });
      continue;
    }
    let found: Checked;
    if ('known' in r) {
      found = kept as Checked;
    } else {
      const chain = readChain(node, r.text ?? '', verifyBytes);
      const last = chain.resets.at(-1);
      found = { stamp: r.stamp ?? '-', ...(chain.broken ? { broken: `line ${chain.broken.line}: ${chain.broken.reason}` } : {}), ...(last !== undefined ? { reset: last } : {}) };
      changed = true;
    }
    now[node] = found;
    if (typeof found.broken === 'string') out.broken.push({ node, reason: found.broken });
    if (typeof found.reset === 'number') out.resets.push({ node, since: found.reset });
  }
  if (changed || Object.keys(before).length !== Object.keys(now).length) {
    try {
      writeFileAtomic(join(trustDir, CHECKED), JSON.stringify({ v: 1, records: now }), { sync: false });
    } catch {
      // a trust directory this process may not write: the next doctor checks again
    }
  }
  return out;
}
