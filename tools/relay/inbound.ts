// Inbound: one message from the hub into the local bus, or into the parked folder with a
// reason. No NATS here: the caller acks whatever this returns (a parked message is acked
// too, so it is never redelivered forever).
//
// Exactly-once effect on a tray: the id never changes across machines, the same id with the
// same bytes is "already here", the same id with other bytes is a conflict (parked, never
// overwritten), and an id this bus imported and later cleaned up is not written again.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { appendIndex, dirStamp } from '../bus/dir-index.js';
import { scopeDir, scopeDirName } from '../bus/layout.js';
import { writeFileAtomic } from '../bus/atomic.js';
import { MAX_BODY_BYTES, MAX_FILE_BYTES, SIGNAL_EXT } from '../bus/signals.js';
import { type Scope, addressees, parseSignal } from '../wire/envelope.js';
import { isMessageId } from '../wire/ids.js';
import { parseChannelName } from '../wire/names.js';
import { type ImportedSet, park } from './store.js';
import { parseSubject } from './subjects.js';

export interface Incoming {
  subject: string;
  data: Uint8Array;
  /** The `Attend-Id` header: the message id on every machine. */
  id: string | undefined;
  /** The `Attend-Origin` header: the host that wrote it, checked against the subject. */
  origin: string | undefined;
  /** The hub's timestamp in ms (becomes the file's mtime). */
  timeMs: number;
  /** Delivered before and never acked: the relay may have died between recording and writing. */
  redelivered?: boolean;
}

export type Outcome =
  | { kind: 'written'; path: string }
  | { kind: 'duplicate' }
  | { kind: 'own' }
  | { kind: 'parked'; reason: string; conflict: boolean };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const TRAY_KEY = /^[A-Za-z0-9-]{1,260}$/;

/** Why this message may not be written, or the scope it goes to. */
export function checkIncoming(self: string, m: Incoming): { ok: true; scope: Scope; id: string } | { ok: false; reason: string } | { ok: 'own' } {
  const route = parseSubject(m.subject);
  if (!route) return { ok: false, reason: `subject '${m.subject}' is not an attend subject` };
  if (route.origin === self) return { ok: 'own' };
  if (m.origin !== route.origin) {
    return { ok: false, reason: `origin host '${m.origin ?? '(none)'}' does not match the subject's origin '${route.origin}'` };
  }
  if (m.data.length > MAX_FILE_BYTES) return { ok: false, reason: `oversized: ${m.data.length} bytes (a signal file is at most ${MAX_FILE_BYTES})` };
  if (m.id === undefined || !isMessageId(m.id)) return { ok: false, reason: `no valid message id (${m.id === undefined ? 'missing' : 'malformed'})` };
  let text: string;
  try {
    text = utf8.decode(m.data);
  } catch {
    return { ok: false, reason: 'malformed: not UTF-8' };
  }
  if (text.includes('\0')) return { ok: false, reason: 'malformed: NUL byte' };
  // One trailing line ending belongs to the file, not the body (as tools/bus/signals.ts reads it).
  const env = parseSignal(text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text);
  if (!env) return { ok: false, reason: 'malformed: not a signal line (needs from|project|cwd|message)' };
  if (Buffer.byteLength(env.body, 'utf8') > MAX_BODY_BYTES) return { ok: false, reason: `oversized: the body is over ${MAX_BODY_BYTES} bytes` };
  const to = env.to;
  if (to === undefined) return { ok: false, reason: 'routing: the line has no to: tag' };
  const ids = addressees(to);
  const t = route.target;
  if (t.kind === 'bcast') {
    if (to !== '*' && ids.length === 0) return { ok: false, reason: `routing: to:${to} arrived on #open` };
    return { ok: true, scope: { kind: 'open' }, id: m.id };
  }
  if (t.kind === 'chan') {
    const name = parseChannelName(t.name);
    if (!name.ok) return { ok: false, reason: `routing: channel: ${name.reason}` };
    if (to !== `#${name.name}` && ids.length === 0) return { ok: false, reason: `routing: to:${to} arrived on #${name.name}` };
    return { ok: true, scope: { kind: 'channel', name: name.name }, id: m.id };
  }
  if (t.host !== self) return { ok: false, reason: `routing: a tray message for host '${t.host}' arrived at '${self}'` };
  if (!TRAY_KEY.test(t.key)) return { ok: false, reason: `routing: '${t.key}' is not a tray key` };
  if (ids.length === 0) return { ok: false, reason: `routing: to:${to} arrived on a tray (a tray message names its recipients)` };
  return { ok: true, scope: { kind: 'tray', key: t.key }, id: m.id };
}

/** The file already there, if any: a stat first (no descriptor), read only when present. */
function readExisting(path: string): Buffer | null {
  if (!statSync(path, { throwIfNoEntry: false })) return null;
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

/**
 * Write `data` as `<id>.signal` in `dir` with the bus's one atomic writer (every byte checked,
 * synced, temporary removed on failure: a full disk never leaves a short import), its time
 * the hub's, then the directory's index line.
 */
function writeImported(dir: string, id: string, data: Uint8Array, timeMs: number): string {
  const path = join(dir, `${id}${SIGNAL_EXT}`);
  const before = dirStamp(dir);
  writeFileAtomic(path, data, { mtimeMs: timeMs });
  appendIndex(dir, id, before);
  return path;
}

export function importMessage(root: string, self: string, imported: ImportedSet, m: Incoming, now: number): Outcome {
  const check = checkIncoming(self, m);
  if (check.ok === 'own') return { kind: 'own' };
  const route = parseSubject(m.subject);
  const base = { at: now, subject: m.subject, ...(m.id !== undefined ? { id: m.id } : {}), ...(route ? { origin: route.origin } : {}) };
  if (check.ok === false) {
    park(root, { ...base, kind: 'reject', reason: check.reason }, m.data);
    return { kind: 'parked', reason: check.reason, conflict: false };
  }
  const dirName = scopeDirName(check.scope);
  const dir = scopeDir(root, check.scope);
  const path = join(dir, `${check.id}${SIGNAL_EXT}`);
  const existing = readExisting(path);
  if (existing) {
    if (Buffer.compare(existing, Buffer.from(m.data)) === 0) {
      imported.add(dirName, check.id);
      return { kind: 'duplicate' };
    }
    const reason = `conflict: ${dirName}/${check.id}${SIGNAL_EXT} exists with other content; kept the local file`;
    park(root, { ...base, kind: 'conflict', reason }, m.data);
    return { kind: 'parked', reason, conflict: true };
  }
  // Imported before and removed since (cleanup, purge, a dissolved channel): not resurrected.
  // A redelivery is different: it was never acked, so the relay may have been killed after
  // recording the id and before the rename; then the file is written now.
  if (imported.has(dirName, check.id) && !m.redelivered) return { kind: 'duplicate' };
  imported.add(dirName, check.id);
  return { kind: 'written', path: writeImported(dir, check.id, m.data, m.timeMs) };
}
