// Reading and writing signal files. Every reader skips what is not a valid line (binary,
// empty, huge, invalid UTF-8, a symlink) and reports it once with its path; such a file is
// moved to the quarantine (tools/bus/store/quarantine.ts), never deleted.

import { closeSync, fstatSync, lstatSync, openSync, readdirSync, unlinkSync, constants as fsc, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Envelope, type ResolvedEnvelope, type Scope, formatSignal, parseSignal, resolveEnvelope } from '../../wire/envelope.js';
import { idTime, isMessageId } from '../../wire/ids.js';
import { writeFileAtomic, readAll, syncDirs } from './atomic.js';
import { appendIndex, dirStamp } from './dir-index.js';
import { busError, refusedError } from '../../wire/errors.js';
import { scopeDir, scopeOfDirName, signalsDir } from './layout.js';
import { quarantineSettled } from './quarantine.js';
import { type SigCheck, type Signer, SIG_EXT, checkSignature, sidecarPath } from '../trust/signing.js';
import { readOrigin } from '../trust/origin.js';
import { type OboCheck, checkOnBehalfOf } from '../trust/delegation.js';

export const SIGNAL_EXT = '.signal';
/** Under signals/: where writers make their temporaries (a dot-name, so never a scope). */
export const TMP_DIR = '.tmp';
/** A message body may be at most 64 KiB; a file larger than this is not a signal. */
export const MAX_BODY_BYTES = 64 * 1024;
export const MAX_FILE_BYTES = MAX_BODY_BYTES + 16 * 1024;

export interface Message extends ResolvedEnvelope {
  id: string;
  scope: Scope;
  /** Creation time in ms: from the id when attend made it, else the file's mtime. */
  time: number;
  path: string;
  /** The signature check (issue 14): ok, none (unsigned) or bad, with the reason; set by every read from disk. */
  sig?: SigCheck['sig'];
  sigReason?: string;
  /** Signed by a key of a new identity of the sender (its key record has a reset since then: issue 20 §2). */
  newKeySince?: number;
  /** The machine a message came from, when another one (issue 13; tools/bus/trust/origin.ts). */
  fromHost?: string;
  /** Set by a reader that lists held messages: why the gate holds it back. */
  heldReason?: string;
  /** `on_behalf_of` checked against the delegations (issue 14 §5); absent without one. */
  obo?: 'verified' | 'claimed';
  oboReason?: string;
}

/** A scope directory that could not be listed, and why. */
export interface Unreadable {
  path: string;
  reason: string;
}

/** Where skipped files are reported. Reports each path once per reporter. */
export interface Reporter {
  skip(path: string, reason: string): void;
  /**
   * A scope directory that could not be listed (unreadable, a symbolic link): its messages are
   * missing from whatever the caller shows, which must not pass for "no messages" (issue #10
   * item 6). Optional so a reporter that only counts skipped files still fits.
   */
  unreadable?(path: string, reason: string): void;
}

const collected = new WeakMap<Reporter, Unreadable[]>();

/** The directories a reporter from createReporter was told it could not read, in order. */
export function unreadableDirs(reporter: Reporter): Unreadable[] {
  return [...(collected.get(reporter) ?? [])];
}

export function createReporter(write: (line: string) => void): Reporter {
  const seen = new Set<string>();
  const dirs: Unreadable[] = [];
  const reporter: Reporter = {
    skip(path, reason) {
      if (seen.has(path)) return;
      seen.add(path);
      write(`attend: skipped ${path}: ${reason}`);
    },
    unreadable(path, reason) {
      if (dirs.some((d) => d.path === path)) return;
      dirs.push({ path, reason });
      write(`attend: cannot read ${path}: ${reason}; its messages are not shown`);
    },
  };
  collected.set(reporter, dirs);
  return reporter;
}

/**
 * Why a scope directory must not be used, or null (a missing one is fine: nothing there yet).
 * A symbolic link is refused like a symlinked bus root (issue #10 item 4): whoever can change
 * the link can move a channel's history out from under the bus, or point a purge at files
 * that are not messages. The directory and signals/ above it are both checked.
 */
export function scopeDirProblem(dir: string): string | null {
  for (const d of [dirname(dir), dir]) {
    let st;
    try {
      // Missing is the common case (a session's own tray before its first mail): no throw for it.
      st = lstatSync(d, { throwIfNoEntry: false });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return null;
      return d === dir ? errnoText(code) : `${d}: ${errnoText(code)}`;
    }
    if (st === undefined) return null;
    if (st.isSymbolicLink()) return d === dir ? 'a symbolic link (refused, like a symlinked bus root)' : `${d} is a symbolic link (refused, like a symlinked bus root)`;
    if (!st.isDirectory()) return d === dir ? 'not a directory' : `${d} is not a directory`;
  }
  return null;
}

/** Why a directory could not be listed, from the error's code. */
export function errnoText(code: string | undefined): string {
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code})`;
  if (code === 'ENOTDIR') return 'not a directory (ENOTDIR)';
  return `cannot list it (${code ?? 'error'})`;
}

/** Throw a bus error (exit 3) unless messages may be written into `dir`. */
export function assertScopeDir(dir: string): void {
  const problem = scopeDirProblem(dir);
  if (problem !== null) throw busError(`refusing to use ${dir}: ${problem}`, 'remove it; attend makes every directory under its root itself');
}

export const silentReporter: Reporter = { skip() {} };

/**
 * Write one message atomically; returns its path. The line ends with one `\n`. Then the id
 * goes into the directory's index hint, with the directory's mtime before and after, so a
 * reader can tell that nothing else changed in between (tools/bus/store/dir-index.ts).
 *
 * Then the directory is synced, so the message survives a power cut once this returns (spec
 * §5, issue 21): the file's data was synced before its rename, and the rename lives in the
 * directory. With `dirs` the directory is added to it instead, for a writer that syncs each
 * directory once after its last rename (writeSignals). The index line goes before the sync
 * and is not synced itself: it is a hint, and a line a power cut takes back only sends a
 * reader to a full listing, which finds the message (late, never lost); appending it first
 * lets readers, woken by the rename, take the message without waiting for the disk.
 */
export function writeSignal(root: string, scope: Scope, id: string, env: Envelope, signer?: Signer, dirs?: Set<string>): string {
  const dir = scopeDir(root, scope);
  const path = join(dir, `${id}${SIGNAL_EXT}`);
  assertScopeDir(dir);
  const before = dirStamp(dir);
  const mine = dirs ?? new Set<string>();
  // The signature sidecar lands before the message (spec §7): a reader never sees a signed
  // message without its signature. One sync after both renames makes both durable: a
  // journalling filesystem (ext4, xfs) commits a directory's operations in order, so a power
  // cut cannot keep the message and lose its sidecar; one that reordered them would leave a
  // signed sender's message unsigned, which readers hold (never show), not lose.
  const sig = join(dir, `${id}${SIG_EXT}`);
  // Temporaries go to signals/.tmp, so a sensor watching `dir` wakes for the message and its
  // index line only, not for each step of the write.
  const tmpDir = join(signalsDir(root), TMP_DIR);
  if (signer) writeFileAtomic(sig, signer.sidecar(id, scope, env), { tmpDir, syncDir: mine });
  try {
    writeFileAtomic(path, `${formatSignal(env)}\n`, { tmpDir, syncDir: mine });
  } catch (err) {
    // The message did not land (a full disk): its sidecar must not stay behind alone.
    if (signer) rmSync(sig, { force: true });
    throw err;
  }
  appendIndex(dir, id, before);
  if (dirs === undefined) {
    try {
      syncDirs(mine);
    } catch (err) {
      // Not durable, so not written: the caller reports a failure, and the message it would
      // repeat on a retry must not be there twice.
      removeSignal(path);
      throw err;
    }
  }
  return path;
}

/** Remove a message file and its signature sidecar (a write being taken back). */
function removeSignal(path: string): void {
  for (const p of [path, sidecarPath(path)]) {
    try {
      unlinkSync(p);
    } catch {
      // not there
    }
  }
}

/**
 * Write one message into every directory of a fan-out (spec §3), all or nothing as far as
 * the disk allows (issue #10 item 1): when one write fails, the copies already renamed into
 * place (and their signature sidecars) are removed before the error propagates, so a send
 * that reports failure has not reached half its recipients. Each directory is synced once,
 * after every copy is in place (writeSignal).
 */
export function writeSignals(root: string, scopes: Scope[], id: string, env: Envelope, signer?: Signer): string[] {
  // Every reader skips a file over MAX_FILE_BYTES: a body within its limit can still get
  // there with a long recipient list, so the whole line is checked before anything is written.
  const bytes = Buffer.byteLength(formatSignal(env), 'utf8') + 1;
  if (bytes > MAX_FILE_BYTES) {
    throw refusedError(`the message would be a ${bytes}-byte file; readers take at most ${MAX_FILE_BYTES}`, 'send to fewer recipients at once, or send a path to a file');
  }
  const done: string[] = [];
  const dirs = new Set<string>();
  try {
    for (const scope of scopes) done.push(writeSignal(root, scope, id, env, signer, dirs));
    syncDirs(dirs);
  } catch (err) {
    for (const path of done) removeSignal(path);
    throw err;
  }
  return done;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `bad` marks a file that is not a signal by its content or kind (as opposed to one that
 * could not be read just now): such a file is quarantined once it has settled.
 */
export type ReadResult = { ok: true; envelope: Envelope; mtimeMs: number } | { ok: false; reason: string; gone?: boolean; bad?: boolean };

/** Read one signal file without following symlinks. Never throws. */
export function readSignalFile(path: string): ReadResult {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'removed while reading', gone: true };
    if (code === 'ELOOP') return { ok: false, reason: 'a symbolic link, not a signal file', bad: true };
    return { ok: false, reason: `cannot open (${code ?? 'error'})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: 'not a regular file', bad: true };
    if (st.size === 0) return { ok: false, reason: 'empty file', bad: true };
    if (st.size > MAX_FILE_BYTES) return { ok: false, reason: `too large (${st.size} bytes)`, bad: true };
    const bytes = readAll(fd, st.size);
    if (bytes.includes(0)) return { ok: false, reason: 'binary content (NUL byte)', bad: true };
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      return { ok: false, reason: 'invalid UTF-8', bad: true };
    }
    // One trailing line ending belongs to the file, not the body.
    if (text.endsWith('\n')) text = text.slice(0, text.endsWith('\r\n') ? -2 : -1);
    const envelope = parseSignal(text);
    if (!envelope) return { ok: false, reason: 'not a signal line (needs from|project|cwd|message)', bad: true };
    return { ok: true, envelope, mtimeMs: st.mtimeMs };
  } catch (err) {
    return { ok: false, reason: `cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    closeSync(fd);
  }
}

/**
 * Ids of the signal files in one scope directory, ascending. Missing directory: []. A
 * directory that cannot be listed, or is refused (a symbolic link), is told to the reporter
 * and gives [] (issue #10 items 4 and 6).
 */
export function listIds(dir: string, reporter?: Reporter): string[] {
  const problem = scopeDirProblem(dir);
  if (problem !== null) {
    reporter?.unreadable?.(dir, problem);
    return [];
  }
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') reporter?.unreadable?.(dir, errnoText(code));
    return [];
  }
  const ids: string[] = [];
  for (const name of names) {
    if (!name.endsWith(SIGNAL_EXT) || name.startsWith('.')) continue;
    const id = name.slice(0, -SIGNAL_EXT.length);
    if (isMessageId(id)) ids.push(id);
  }
  return ids.sort();
}

/**
 * Read one message by id from a scope; null when it is missing or invalid (reported). A file
 * that is not a signal is moved to the quarantine once it has settled (issue #10 item 2), so
 * it is reported once rather than by every reader on every run.
 */
export function readMessage(root: string, scope: Scope, id: string, reporter: Reporter): Message | null {
  const path = join(scopeDir(root, scope), `${id}${SIGNAL_EXT}`);
  const res = readSignalFile(path);
  if (!res.ok) {
    if (res.gone) return null;
    const moved = res.bad ? quarantineSettled(root, scope, path, res.reason) : { state: 'kept' as const };
    if (moved.state === 'gone') return null;
    reporter.skip(path, moved.state === 'moved' ? `${res.reason}; moved to ${moved.to}` : res.reason);
    return null;
  }
  const resolved = resolveEnvelope(res.envelope, scope);
  const m: Message = { ...resolved, id, scope, time: idTime(id) ?? res.mtimeMs, path };
  // Verified on first look (an Ed25519 check costs ~0.1 ms): most reads never ask — a
  // sibling's tray mail, one's own messages, a cold start's unread history.
  let check: SigCheck | undefined;
  const verify = () => (check ??= checkSignature(root, { id, scope, path, envelope: res.envelope, fromId: resolved.fromId }));
  // A message from another machine reads as that machine's parties (issue 13).
  readOrigin(root, sidecarPath(path), m, verify);
  Object.defineProperty(m, 'sig', { enumerable: true, configurable: true, get: () => verify().sig, set: (v) => Object.defineProperty(m, 'sig', { value: v, enumerable: true, writable: true, configurable: true }) });
  Object.defineProperty(m, 'sigReason', {
    enumerable: true,
    configurable: true,
    get: () => (verify().sig === 'bad' ? verify().sigReason : undefined),
    set: (v) => Object.defineProperty(m, 'sigReason', { value: v, enumerable: true, writable: true, configurable: true }),
  });
  Object.defineProperty(m, 'newKeySince', { enumerable: true, configurable: true, get: () => (verify().sig === 'ok' ? verify().newKeySince : undefined) });
  if (res.envelope.onBehalfOf !== undefined) {
    let obo: OboCheck | null | undefined;
    const checkObo = () => (obo ??= checkOnBehalfOf(root, m, Date.now()));
    Object.defineProperty(m, 'obo', { enumerable: true, configurable: true, get: () => checkObo()?.state });
    Object.defineProperty(m, 'oboReason', { enumerable: true, configurable: true, get: () => { const c = checkObo(); return c?.state === 'claimed' ? c.reason : undefined; } });
  }
  return m;
}

/**
 * The sender and `to` of a line as readMessage reads them (a message verified as another
 * machine's reads as that machine's parties, issue 13), for a reader that keeps only those:
 * the listing cache (tools/bus/store/listing.ts), so that who may see an entry is decided on
 * the ids a reader of its message sees.
 */
export function readParties(root: string, scope: Scope, id: string, path: string, envelope: Envelope): { fromId: string; to: string } {
  const resolved = resolveEnvelope(envelope, scope);
  const parties = { fromId: resolved.fromId, to: resolved.to };
  readOrigin(root, sidecarPath(path), parties, () => checkSignature(root, { id, scope, path, envelope, fromId: resolved.fromId }));
  return parties;
}

/** Every message in the given scopes, oldest first. */
export function readScopes(root: string, scopes: Scope[], reporter: Reporter): Message[] {
  const out: Message[] = [];
  for (const scope of scopes) {
    for (const id of listIds(scopeDir(root, scope), reporter)) {
      const m = readMessage(root, scope, id, reporter);
      if (m) out.push(m);
    }
  }
  return sortMessages(out);
}

export function sortMessages(msgs: Message[]): Message[] {
  return msgs.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Every scope directory present under signals/. */
export function listScopes(root: string): Scope[] {
  let names: string[];
  try {
    names = readdirSync(signalsDir(root));
  } catch {
    return [];
  }
  const out: Scope[] = [];
  for (const n of names.sort()) {
    const s = scopeOfDirName(n);
    if (s) out.push(s);
  }
  return out;
}

/** Find a message by id in the given scopes (the first that has it). */
export function findMessage(root: string, scopes: Scope[], id: string, reporter: Reporter): Message | null {
  for (const scope of scopes) {
    const problem = scopeDirProblem(scopeDir(root, scope));
    if (problem !== null) {
      reporter.unreadable?.(scopeDir(root, scope), problem);
      continue;
    }
    const m = readMessage(root, scope, id, reporter);
    if (m) return m;
  }
  return null;
}
