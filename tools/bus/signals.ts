// Reading and writing signal files. Every reader skips what is not a valid line (binary,
// empty, huge, invalid UTF-8, a symlink) and reports it once with its path; nothing here
// ever deletes a message.

import { closeSync, fstatSync, openSync, readdirSync, readSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { type Envelope, type ResolvedEnvelope, type Scope, formatSignal, parseSignal, resolveEnvelope } from '../wire/envelope.js';
import { idTime, isMessageId } from '../wire/ids.js';
import { writeFileAtomic } from './atomic.js';
import { appendIndex, dirStamp } from './dir-index.js';
import { scopeDir, scopeOfDirName, signalsDir } from './layout.js';
import { type SigCheck, type Signer, SIG_EXT, checkSignature } from './signing.js';
import { type OboCheck, checkOnBehalfOf } from './delegation.js';

export const SIGNAL_EXT = '.signal';
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
  /** Set by a reader that lists held messages: why the gate holds it back. */
  heldReason?: string;
  /** `on_behalf_of` checked against the delegations (issue 14 §5); absent without one. */
  obo?: 'verified' | 'claimed';
  oboReason?: string;
}

/** Where skipped files are reported. Reports each path once per reporter. */
export interface Reporter {
  skip(path: string, reason: string): void;
}

export function createReporter(write: (line: string) => void): Reporter {
  const seen = new Set<string>();
  return {
    skip(path, reason) {
      if (seen.has(path)) return;
      seen.add(path);
      write(`attend: skipped ${path}: ${reason}`);
    },
  };
}

export const silentReporter: Reporter = { skip() {} };

/**
 * Write one message atomically; returns its path. The line ends with one `\n`. Then the id
 * goes into the directory's index hint, with the directory's mtime before and after, so a
 * reader can tell that nothing else changed in between (tools/bus/dir-index.ts).
 */
export function writeSignal(root: string, scope: Scope, id: string, env: Envelope, signer?: Signer): string {
  const dir = scopeDir(root, scope);
  const path = join(dir, `${id}${SIGNAL_EXT}`);
  const before = dirStamp(dir);
  // The signature sidecar lands before the message (spec §7): a reader never sees a signed
  // message without its signature.
  if (signer) writeFileAtomic(join(dir, `${id}${SIG_EXT}`), signer.sidecar(id, scope, env));
  writeFileAtomic(path, `${formatSignal(env)}\n`);
  appendIndex(dir, id, before);
  return path;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export type ReadResult = { ok: true; envelope: Envelope; mtimeMs: number } | { ok: false; reason: string; gone?: boolean };

/** Read one signal file without following symlinks. Never throws. */
export function readSignalFile(path: string): ReadResult {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'removed while reading', gone: true };
    if (code === 'ELOOP') return { ok: false, reason: 'a symbolic link, not a signal file' };
    return { ok: false, reason: `cannot open (${code ?? 'error'})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: 'not a regular file' };
    if (st.size === 0) return { ok: false, reason: 'empty file' };
    if (st.size > MAX_FILE_BYTES) return { ok: false, reason: `too large (${st.size} bytes)` };
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    const bytes = buf.subarray(0, off);
    if (bytes.includes(0)) return { ok: false, reason: 'binary content (NUL byte)' };
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      return { ok: false, reason: 'invalid UTF-8' };
    }
    // One trailing line ending belongs to the file, not the body.
    if (text.endsWith('\n')) text = text.slice(0, text.endsWith('\r\n') ? -2 : -1);
    const envelope = parseSignal(text);
    if (!envelope) return { ok: false, reason: 'not a signal line (needs from|project|cwd|message)' };
    return { ok: true, envelope, mtimeMs: st.mtimeMs };
  } catch (err) {
    return { ok: false, reason: `cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  } finally {
    closeSync(fd);
  }
}

/** Ids of the signal files in one scope directory, ascending. Missing directory: []. */
export function listIds(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
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

/** Read one message by id from a scope; null when it is missing or invalid (reported). */
export function readMessage(root: string, scope: Scope, id: string, reporter: Reporter): Message | null {
  const path = join(scopeDir(root, scope), `${id}${SIGNAL_EXT}`);
  const res = readSignalFile(path);
  if (!res.ok) {
    if (!res.gone) reporter.skip(path, res.reason);
    return null;
  }
  const resolved = resolveEnvelope(res.envelope, scope);
  const m: Message = { ...resolved, id, scope, time: idTime(id) ?? res.mtimeMs, path };
  // Verified on first look (an Ed25519 check costs ~0.1 ms): most reads never ask — a
  // sibling's tray mail, one's own messages, a cold start's unread history.
  let check: SigCheck | undefined;
  const verify = () => (check ??= checkSignature(root, { id, scope, path, envelope: res.envelope, fromId: resolved.fromId }));
  Object.defineProperty(m, 'sig', { enumerable: true, configurable: true, get: () => verify().sig, set: (v) => Object.defineProperty(m, 'sig', { value: v, enumerable: true, writable: true, configurable: true }) });
  Object.defineProperty(m, 'sigReason', {
    enumerable: true,
    configurable: true,
    get: () => (verify().sig === 'bad' ? verify().sigReason : undefined),
    set: (v) => Object.defineProperty(m, 'sigReason', { value: v, enumerable: true, writable: true, configurable: true }),
  });
  if (res.envelope.onBehalfOf !== undefined) {
    let obo: OboCheck | null | undefined;
    const checkObo = () => (obo ??= checkOnBehalfOf(root, m, Date.now()));
    Object.defineProperty(m, 'obo', { enumerable: true, configurable: true, get: () => checkObo()?.state });
    Object.defineProperty(m, 'oboReason', { enumerable: true, configurable: true, get: () => { const c = checkObo(); return c?.state === 'claimed' ? c.reason : undefined; } });
  }
  return m;
}

/** Every message in the given scopes, oldest first. */
export function readScopes(root: string, scopes: Scope[], reporter: Reporter): Message[] {
  const out: Message[] = [];
  for (const scope of scopes) {
    for (const id of listIds(scopeDir(root, scope))) {
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
    const m = readMessage(root, scope, id, reporter);
    if (m) return m;
  }
  return null;
}
