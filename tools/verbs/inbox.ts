// `inbox`, `read` and `thread`: the receive set, newest page first; one message in full;
// the thread a message belongs to. Reading never consumes or deletes.

import type { VerbCtx } from './context.js';
import { busError, notFoundError, refusedError, usageError, verbHint } from '../bus/errors.js';
import { createGate } from '../bus/gate.js';
import { scopeLabel } from '../bus/layout.js';
import { isForMe, receiveScopes } from '../bus/receive.js';
import { type Message, type Unreadable, findMessage, listScopes, readScopes, unreadableDirs } from '../bus/signals.js';
import { noteSurfaced } from '../bus/surfaced.js';
import { isMessageId } from '../wire/ids.js';
import { printable } from '../wire/names.js';

/** A message as JSON (CLI `--json`, MCP results): the one shape every front end prints. */
export function messageJson(m: Message) {
  return {
    id: m.id,
    scope: scopeLabel(m.scope),
    time: new Date(m.time).toISOString(),
    from: m.from,
    fromKind: m.fromKind,
    fromId: m.fromId,
    // Issue 13: the machine a message came from, when another one (its from_id then reads host:id).
    ...(m.fromHost !== undefined ? { fromHost: m.fromHost } : {}),
    onBehalfOf: m.onBehalfOf ?? null,
    to: m.to,
    re: m.re ?? null,
    project: m.project,
    cwd: m.cwd,
    body: m.body,
    legacy: m.legacy,
    // Issue 14: the signature check, whether on_behalf_of is vouched for, why it is held.
    sig: m.sig ?? null,
    ...(m.sigReason !== undefined ? { sigReason: m.sigReason } : {}),
    ...(m.onBehalfOf !== undefined ? { onBehalfOfStatus: m.obo ?? 'claimed', ...(m.oboReason !== undefined ? { onBehalfOfReason: m.oboReason } : {}) } : {}),
    ...(m.heldReason !== undefined ? { held: m.heldReason } : {}),
    ...('access' in m ? { access: (m as ReadMessage).access } : {}),
  };
}

/**
 * How the caller may read a message (issue #10 §11): it received it (its trays, channels it
 * is in, #open), it sent it, or — the human who owns the bus — it reads what was not for it,
 * and the output says so. An agent never reads another session's direct message by id.
 */
export type Access = 'received' | 'sent' | 'owner';

export interface ReadMessage extends Message {
  access: Access;
}

/**
 * Find a message the caller may read: in its receive set (and for it there: a sibling's
 * tray mail is not), else anywhere on the bus if the caller sent it, or is the human owner.
 */
export function lookupMessage(ctx: VerbCtx, id: string): ReadMessage | null {
  const root = ctx.root();
  const who = ctx.identity();
  const mine = findMessage(root, receiveScopes(root, who), id, ctx.reporter);
  if (mine && isForMe(mine, who)) return { ...mine, access: mine.fromId === who.id ? 'sent' : 'received' };
  const anywhere = findMessage(root, listScopes(root), id, ctx.reporter);
  if (!anywhere) return null;
  if (anywhere.fromId === who.id) return { ...anywhere, access: 'sent' };
  if (who.kind === 'human') return { ...anywhere, access: 'owner' };
  return null;
}

export interface InboxInput {
  limit: number;
  page: number;
  before?: string | undefined;
  /** List only what the gate holds back (bad signature, refused by policy), with the reason. */
  held?: boolean | undefined;
}

export interface InboxPage {
  messages: Message[];
  total: number;
  page: number;
  pages: number;
  limit: number;
  /** Scope directories that could not be read: the listing is incomplete (issue #10 item 6). */
  unreadable?: Unreadable[];
}

export function readInbox(ctx: VerbCtx, opts: { held?: boolean | undefined } = {}): Message[] {
  const root = ctx.root();
  const who = ctx.identity();
  // Held messages are never shown to a model (spec §7): only the person who owns the bus
  // lists them, and they list every directory, since what is held sits in sessions' trays.
  if (opts.held && who.kind !== 'human') {
    throw refusedError('held messages are shown only to the person who owns the bus, never to a session', 'run attend inbox --held in your own terminal');
  }
  const gate = createGate(root, who);
  const broken = gate.broken();
  if (broken !== null) throw busError(broken, 'fix or remove the policy file; attend grants shows what it holds');
  const seen = new Set<string>();
  const out: Message[] = [];
  for (const m of readScopes(root, opts.held ? listScopes(root) : receiveScopes(root, who), ctx.reporter)) {
    // A fan-out writes the same id into several directories; show it once.
    if (seen.has(m.id) || (!opts.held && !isForMe(m, who))) continue;
    const reason = gate.held(m);
    if ((reason !== null) !== (opts.held === true)) continue;
    if (reason !== null) m.heldReason = reason;
    seen.add(m.id);
    out.push(m);
  }
  return out;
}

export function runInbox(ctx: VerbCtx, input: InboxInput): InboxPage {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 10_000) throw usageError('--limit takes a whole number from 1 to 10000');
  if (!Number.isInteger(input.page) || input.page < 1) throw usageError('--page takes a whole number from 1');
  if (input.before !== undefined && !isMessageId(input.before)) throw usageError(`--before '${printable(input.before)}' is not a message id`);
  let all = readInbox(ctx, { held: input.held });
  if (input.before !== undefined) {
    const idx = all.findIndex((m) => m.id === input.before);
    if (idx < 0) throw notFoundError(`message ${input.before} is not in this inbox`);
    all = all.slice(0, idx);
  }
  const newestFirst = all.reverse();
  const pages = Math.max(1, Math.ceil(newestFirst.length / input.limit));
  const messages = newestFirst.slice((input.page - 1) * input.limit, input.page * input.limit);
  markShown(ctx, messages);
  const unreadable = unreadableDirs(ctx.reporter);
  return { messages, total: newestFirst.length, page: input.page, pages, limit: input.limit, ...(unreadable.length > 0 ? { unreadable } : {}) };
}

/** Remember the newest message from someone else that was shown, for `attend reply`. */
export function markShown(ctx: VerbCtx, messages: Message[]): void {
  const who = ctx.identity();
  let newest: Message | undefined;
  for (const m of messages) if (m.fromId !== who.id && (!newest || m.time > newest.time)) newest = m;
  if (newest) noteSurfaced(ctx.root(), who.id, { id: newest.id, time: newest.time });
}

export function runRead(ctx: VerbCtx, id: string): ReadMessage {
  if (!isMessageId(id)) throw usageError(`'${printable(id)}' is not a message id`);
  const m = lookupMessage(ctx, id);
  // Not found and not yours read the same, so an id tells nothing about others' mail.
  if (!m) throw notFoundError(`message ${id} was not found among the messages you receive`, verbHint('inbox', [], { then: 'lists message ids' }));
  const reason = createGate(ctx.root(), ctx.identity()).held(m);
  if (reason !== null) throw refusedError(`message ${id} is held: ${reason}`, 'attend inbox --held lists held messages with the reason');
  markShown(ctx, [m]);
  return m;
}

/** The whole thread a message belongs to: its root and every reply below it, oldest first. */
export function runThread(ctx: VerbCtx, id: string): ReadMessage[] {
  const start = runRead(ctx, id);
  const who = ctx.identity();
  const byId = new Map<string, ReadMessage>();
  for (const m of readInbox(ctx)) byId.set(m.id, { ...m, access: m.fromId === who.id ? 'sent' : 'received' });
  byId.set(start.id, start);
  let rootMsg = start;
  const guard = new Set<string>([start.id]);
  while (rootMsg.re !== undefined) {
    const parent = byId.get(rootMsg.re) ?? lookupMessage(ctx, rootMsg.re);
    if (!parent || guard.has(parent.id)) break;
    guard.add(parent.id);
    byId.set(parent.id, parent);
    rootMsg = parent;
  }
  const inThread = new Set<string>([rootMsg.id]);
  const sorted = [...byId.values()].sort((a, b) => a.time - b.time || a.id.localeCompare(b.id));
  // Replies come after their parents in time, so one pass in time order finds them all.
  for (const m of sorted) if (m.re !== undefined && inThread.has(m.re)) inThread.add(m.id);
  return sorted.filter((m) => inThread.has(m.id));
}
