// Inbound: messages from the hub into the local bus, or into the parked folder with a
// reason. No NATS here: the caller acks whatever this returns (a parked message is acked
// too, so it is never redelivered forever), and acks a written one only once its batch is
// durable.
//
// Exactly-once effect on a tray: the id never changes across machines, the same id with the
// same bytes is "already here", the same id with other bytes is a conflict (parked, never
// overwritten), and an id this bus imported and later cleaned up is not written again.
//
// Signatures (issue 14): the message's `.sig` sidecar travels with it. It is checked here —
// signed on the machine that relayed it, by a key that machine published for the sender,
// over these very fields — and written before the message, as a local writer does
// (tools/bus/store/messages.ts writeSignal), so readers verify it like any other (`sig=ok`). A
// message whose signature fails is parked with the reason, never written.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type AtomicFile, writeFilesAtomic } from '../bus/store/index.js';
import { appendIndexMany, dirStamp } from '../bus/store/index.js';
import { verifyBytes } from '../bus/trust/index.js';
import { scopeDir, scopeDirName } from '../bus/store/index.js';
import { MAX_BODY_BYTES, MAX_FILE_BYTES, SIGNAL_EXT } from '../bus/store/index.js';
import { SIG_EXT } from '../bus/trust/index.js';
import { type Envelope, type Scope, addressees, parseSignal } from '../wire/envelope.js';
import { idTime, isMessageId } from '../wire/ids.js';
import { parseChannelName } from '../wire/names.js';
import { destinationOf, messageSigningBytes, parseSidecar } from '../wire/sign.js';
import type { OwnWrites } from './own-writes.js';
import { type ImportedSet, park } from './store.js';
import { parseSubject } from './subjects.js';

export interface Incoming {
  subject: string;
  data: Uint8Array;
  /** The `Attend-Id` header: the message id on every machine. */
  id: string | undefined;
  /** The `Attend-Origin` header: the host that wrote it, checked against the subject. */
  origin: string | undefined;
  /** The `Attend-Sig` header: the sidecar's exact bytes; absent for an unsigned message. */
  sig?: Uint8Array | undefined;
  /** The hub's timestamp in ms (becomes the file's mtime). */
  timeMs: number;
  /** Delivered before and never acked: the relay may have died between recording and writing. */
  redelivered?: boolean;
}

type Outcome =
  | { kind: 'written'; path: string }
  | { kind: 'duplicate' }
  | { kind: 'own' }
  | { kind: 'parked'; reason: string; conflict: boolean };

/** One message ready to be written (in a batch, tools/relay/inbound.ts writeImports). */
export interface Write {
  kind: 'write';
  dir: string;
  dirName: string;
  id: string;
  data: Uint8Array;
  sig: Uint8Array | null;
  timeMs: number;
  /** The sender as written, for the relay's routing of replies and the known parties; none on a legacy line. */
  from: Sender | undefined;
}

/** Who wrote an imported message, as its line says (`from_id`, its kind, its origin `cwd`). */
export interface Sender {
  id: string;
  kind: 'agent' | 'human';
  origin: string;
}

function senderOf(env: Envelope): Sender | undefined {
  if (env.fromId === undefined) return undefined;
  return { id: env.fromId, kind: env.fromKind ?? (env.from.startsWith('claude:') ? 'agent' : 'human'), origin: env.cwd };
}

export type Plan =
  | Write
  | Exclude<Outcome, { kind: 'written' }>
  /** Signed with a key not recorded here yet: ask the hub for the origin's keys, then plan again. */
  | { kind: 'need-key'; origin: string; node: string };

/** What planning an import needs to know about this bus. */
export interface ImportContext {
  root: string;
  self: string;
  imported: ImportedSet;
  now: number;
  /** Has machine `origin` published `keyId` for its node `node`? (tools/bus/trust/remote-keys.ts) */
  keyKnown(origin: string, node: string, keyId: string): boolean;
  /** Does `origin`'s node sign its messages from `t` on (a key published before `t`)? */
  nodeSigns(origin: string, node: string, t: number): boolean;
  /** Why `origin` cannot speak for `node` (a session of this machine, or pinned to another), or null (tools/bus/trust/remote-keys.ts). */
  claim(origin: string, node: string): string | null;
  /** A channel dissolved here with no newer channel of that name (tools/bus/channels/membership.ts). */
  dissolved(name: string): { at: number; by: string } | null;
  /** Planned in this batch and not on disk yet: path → bytes. */
  pending?: Map<string, Uint8Array>;
  /** The origin's keys were just asked for: a key still unknown is final. */
  fetched?: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const TRAY_KEY = /^[A-Za-z0-9-]{1,260}$/;

/** Why this message may not be written, or the scope it goes to. */
function checkIncoming(self: string, m: Incoming): { ok: true; scope: Scope; id: string; env: Envelope } | { ok: false; reason: string } | { ok: 'own' } {
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
  // One trailing line ending belongs to the file, not the body (as tools/bus/store/messages.ts reads it).
  const env = parseSignal(text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text);
  if (!env) return { ok: false, reason: 'malformed: not a signal line (needs from|project|cwd|message)' };
  if (Buffer.byteLength(env.body, 'utf8') > MAX_BODY_BYTES) return { ok: false, reason: `oversized: the body is over ${MAX_BODY_BYTES} bytes` };
  const to = env.to;
  if (to === undefined) return { ok: false, reason: 'routing: the line has no to: tag' };
  const ids = addressees(to);
  const t = route.target;
  if (t.kind === 'bcast') {
    if (to !== '*' && ids.length === 0) return { ok: false, reason: `routing: to:${to} arrived on #open` };
    return { ok: true, scope: { kind: 'open' }, id: m.id, env };
  }
  if (t.kind === 'chan') {
    const name = parseChannelName(t.name);
    if (!name.ok) return { ok: false, reason: `routing: channel: ${name.reason}` };
    if (to !== `#${name.name}` && ids.length === 0) return { ok: false, reason: `routing: to:${to} arrived on #${name.name}` };
    return { ok: true, scope: { kind: 'channel', name: name.name }, id: m.id, env };
  }
  if (t.host !== self) return { ok: false, reason: `routing: a tray message for host '${t.host}' arrived at '${self}'` };
  if (!TRAY_KEY.test(t.key)) return { ok: false, reason: `routing: '${t.key}' is not a tray key` };
  if (ids.length === 0) return { ok: false, reason: `routing: to:${to} arrived on a tray (a tray message names its recipients)` };
  return { ok: true, scope: { kind: 'tray', key: t.key }, id: m.id, env };
}

/**
 * Why the signature that came with a message fails, or null when it holds (or the message
 * is unsigned from a node that does not sign). `need-key` when the key is not recorded yet.
 */
function checkSig(ctx: ImportContext, origin: string, id: string, scope: Scope, env: Envelope, sig: Uint8Array | undefined): string | null | 'need-key' {
  const node = env.fromId;
  // A session of this machine, or one pinned to another, is never this origin's to speak for,
  // signed or not (tools/bus/trust/remote-keys.ts).
  const claimed = node === undefined ? null : ctx.claim(origin, node);
  if (claimed !== null) return claimed;
  if (!sig || sig.length === 0) {
    // As a reader judges a local line (tools/bus/trust/signing.ts): unsigned after its first key is a forgery.
    if (node !== undefined && ctx.nodeSigns(origin, node, idTime(id) ?? Number.POSITIVE_INFINITY)) return `unsigned, but ${node} on ${origin} signs its messages`;
    return null;
  }
  let text: string;
  try {
    text = utf8.decode(sig);
  } catch {
    return 'the signature is not UTF-8';
  }
  const side = parseSidecar(text);
  if (typeof side === 'string') return side;
  if (side.host !== origin) return `signed on host '${side.host}' but relayed by '${origin}'`;
  if (node === undefined) return 'a signature on a line without from_id';
  const bytes = messageSigningBytes({ id, dest: destinationOf(scope), host: side.host, envelope: env });
  if (!verifyBytes(side.keyId, bytes, side.sig)) return 'the signature does not match this message (altered, moved, or another message’s signature)';
  if (!ctx.keyKnown(origin, node, side.keyId)) {
    if (!ctx.fetched) return 'need-key';
    return `${origin} has not published the signing key ${side.keyId.slice(0, 12)}… for ${node}`;
  }
  return null;
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

/** Decide what to do with one message; parks it (with its reason) when it must not be written. */
export function planImport(ctx: ImportContext, m: Incoming): Plan {
  const { root, imported } = ctx;
  const check = checkIncoming(ctx.self, m);
  if (check.ok === 'own') return { kind: 'own' };
  const route = parseSubject(m.subject);
  const base = { at: ctx.now, subject: m.subject, ...(m.id !== undefined ? { id: m.id } : {}), ...(route ? { origin: route.origin } : {}) };
  const parked = (reason: string): Plan => {
    park(root, { ...base, kind: 'reject', reason }, m.data);
    return { kind: 'parked', reason, conflict: false };
  };
  if (check.ok === false) return parked(check.reason);
  const dirName = scopeDirName(check.scope);
  const dir = scopeDir(root, check.scope);
  const path = join(dir, `${check.id}${SIGNAL_EXT}`);
  const existing = ctx.pending?.get(path) ?? readExisting(path);
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
  if (check.scope.kind === 'channel') {
    const gone = ctx.dissolved(check.scope.name);
    if (gone) return parked(`#${check.scope.name} was dissolved (${new Date(gone.at).toISOString()}); a late message does not bring it back`);
  }
  const sigProblem = checkSig(ctx, route!.origin, check.id, check.scope, check.env, m.sig);
  if (sigProblem === 'need-key') return { kind: 'need-key', origin: route!.origin, node: check.env.fromId! };
  if (sigProblem !== null) return parked(`bad signature: ${sigProblem}`);
  return { kind: 'write', dir, dirName, id: check.id, data: m.data, sig: m.sig && m.sig.length > 0 ? m.sig : null, timeMs: m.timeMs, from: senderOf(check.env) };
}

/**
 * Write a batch: each id recorded as imported first (the loop guard: the outbound side never
 * sees one unmarked), then every sidecar and message with the bus's atomic writer (all
 * synced, sidecar renamed before its message, one index line per message, then each
 * directory synced once). Throws (exit 3) when the bus refused a write: nothing may be acked then.
 */
export async function writeImports(imported: ImportedSet, writes: Write[], own?: Pick<OwnWrites, 'indexed'>): Promise<void> {
  if (writes.length === 0) return;
  imported.addMany(writes.map((w) => [w.dirName, w.id]));
  const before = new Map<string, string>();
  const files: AtomicFile[] = [];
  const ids = new Map<string, string[]>();
  for (const w of writes) {
    if (!before.has(w.dir)) before.set(w.dir, dirStamp(w.dir));
    if (w.sig) files.push({ path: join(w.dir, `${w.id}${SIG_EXT}`), data: w.sig });
    // A copy of a message from elsewhere keeps the hub's time.
    files.push({ path: join(w.dir, `${w.id}${SIGNAL_EXT}`), data: w.data, mtimeMs: w.timeMs });
    let list = ids.get(w.dir);
    if (!list) ids.set(w.dir, (list = []));
    list.push(w.id);
  }
  // The index lines go in before the directories are synced, as a local writer's do
  // (tools/bus/store/messages.ts writeSignal): a sensor woken by the rename takes the message
  // from its line at once instead of waiting a directory sync for it (or SETTLE_MS). The
  // batch is acked only once this resolves, syncs included, so a relay killed before then is
  // offered it again and finds the same bytes already here.
  await writeFilesAtomic(files, {
    afterRename: () => {
      for (const [dir, list] of ids) {
        const end = appendIndexMany(dir, list, before.get(dir)!);
        own?.indexed(dir, end);
      }
    },
  });
}

/** One message on its own (tests, and anything that does not batch). */
export async function importMessage(ctx: ImportContext, m: Incoming): Promise<Outcome> {
  const plan = planImport({ ...ctx, fetched: true }, m);
  if (plan.kind === 'need-key') throw new Error('unreachable: keys were fetched');
  if (plan.kind !== 'write') return plan;
  await writeImports(ctx.imported, [plan]);
  return { kind: 'written', path: join(plan.dir, `${plan.id}${SIGNAL_EXT}`) };
}
