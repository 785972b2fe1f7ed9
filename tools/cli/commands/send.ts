// `attend send` and `attend reply`: build one envelope from the resolved identity and the
// routing flags, then fan out one file per destination directory (spec §3 "to").

import type { Ctx } from '../context.js';
import { notFoundError, refusedError, usageError } from '../../bus/errors.js';
import { envelopeFrom } from '../../bus/compose.js';
import { receiveScopes } from '../../bus/receive.js';
import { requireChannel } from '../../bus/channels.js';
import type { Peer } from '../../bus/roster.js';
import { MAX_BODY_BYTES, type Message, findMessage, writeSignal } from '../../bus/signals.js';
import { readSurfaced } from '../../bus/surfaced.js';
import { resolveTargets } from '../../bus/targets.js';
import { localHostName, peersEverywhere } from '../../bus/remote.js';
import { type Scope, SIGNAL_ID_CLASS, WIDE_CLASS, envelopeProblems } from '../../wire/envelope.js';
import { attendKey, parseChannelName, printable } from '../../wire/names.js';
import { scopeLabel } from '../../bus/layout.js';
import { listScopes } from '../../bus/signals.js';

export interface SendInput {
  message: string;
  to?: string[] | undefined;
  channel?: string | undefined;
  re?: string | undefined;
  onBehalfOf?: string | undefined;
}

export interface SendResult {
  id: string;
  to: string;
  scopes: string[];
  files: string[];
  recipients: { id: string; name: string; kind: string }[];
  re: string | null;
  notes: string[];
}

export function checkBody(message: string): void {
  if (message.trim().length === 0) throw usageError('the message is empty', 'attend send "text"');
  const bytes = Buffer.byteLength(message, 'utf8');
  if (bytes > MAX_BODY_BYTES) {
    throw refusedError(`the message is ${bytes} bytes; the limit is ${MAX_BODY_BYTES} (64 KiB)`, 'send a path to a file instead');
  }
}

interface Route {
  scopes: Scope[];
  to: string;
  recipients: Peer[];
}

function routeFor(ctx: Ctx, input: SendInput): Route {
  let channel: string | undefined;
  if (input.channel !== undefined) {
    const parsed = parseChannelName(input.channel);
    if (!parsed.ok) throw usageError(parsed.reason);
    channel = parsed.name;
    requireChannel(ctx.root(), channel);
  }
  const targets = input.to ?? [];
  if (targets.length === 0) {
    if (channel !== undefined) return { scopes: [{ kind: 'channel', name: channel }], to: `#${channel}`, recipients: [] };
    return { scopes: [{ kind: 'open' }], to: '*', recipients: [] };
  }
  // Members on other machines too (issue 13); their trays are relayed by `attend relay`.
  const root = ctx.root();
  const recipients = resolveTargets(targets, peersEverywhere(root, ctx.live(), ctx.now()), { cwd: ctx.cwd, home: ctx.paths.home, localHost: localHostName(root) });
  const to = recipients.map((p) => p.id).join(',');
  if (!WIDE_CLASS.test(to)) throw usageError(`recipient ids '${printable(to)}' cannot be written on the wire`);
  if (channel !== undefined) return { scopes: [{ kind: 'channel', name: channel }], to, recipients };
  const keys = [...new Set(recipients.map((p) => attendKey(p.origin)))];
  return { scopes: keys.map((key) => ({ kind: 'tray', key })), to, recipients };
}

export function runSend(ctx: Ctx, input: SendInput): SendResult {
  checkBody(input.message);
  if (input.re !== undefined && !SIGNAL_ID_CLASS.test(input.re)) {
    throw usageError(`--re '${printable(input.re)}' is not a message id (A-Z a-z 0-9 _ -)`);
  }
  if (input.onBehalfOf !== undefined && !WIDE_CLASS.test(input.onBehalfOf)) {
    throw usageError(`--on-behalf-of '${printable(input.onBehalfOf)}' is not a valid id`);
  }
  const route = routeFor(ctx, input);
  return writeRouted(ctx, input, route, []);
}

function writeRouted(ctx: Ctx, input: SendInput, route: Route, notes: string[]): SendResult {
  const who = ctx.identity();
  const env = envelopeFrom(who, { to: route.to, body: input.message, re: input.re, onBehalfOf: input.onBehalfOf });
  const problems = envelopeProblems(env);
  if (problems.length > 0) throw usageError(problems.join('; '));
  const root = ctx.root();
  const id = ctx.newId();
  const files = route.scopes.map((scope) => writeSignal(root, scope, id, env));
  return {
    id,
    to: route.to,
    scopes: route.scopes.map(scopeLabel),
    files,
    recipients: route.recipients.map((p) => ({ id: p.id, name: p.name, kind: p.kind })),
    re: input.re ?? null,
    notes,
  };
}

/** Find a message anywhere on the bus: the receive set first, then every scope. */
export function lookupMessage(ctx: Ctx, id: string): Message | null {
  const root = ctx.root();
  const mine = receiveScopes(root, ctx.identity());
  return findMessage(root, mine, id, ctx.reporter) ?? findMessage(root, listScopes(root), id, ctx.reporter);
}

export function runReply(ctx: Ctx, input: Omit<SendInput, 're'> & { re?: string | undefined }): SendResult {
  checkBody(input.message);
  const who = ctx.identity();
  const root = ctx.root();
  let parentId = input.re;
  if (parentId !== undefined && !SIGNAL_ID_CLASS.test(parentId)) {
    throw usageError(`--re '${printable(parentId)}' is not a message id (A-Z a-z 0-9 _ -)`);
  }
  const notes: string[] = [];
  if (parentId === undefined) parentId = readSurfaced(root, who.id)?.id;
  const parent = parentId !== undefined ? lookupMessage(ctx, parentId) : null;
  if (!parent) {
    notes.push(
      parentId === undefined
        ? 'nothing has been shown to this session yet: sent unthreaded'
        : `message ${parentId} was not found: sent unthreaded`,
    );
    const sent = runSend(ctx, { ...input, re: undefined });
    sent.notes.push(...notes);
    return sent;
  }
  const explicitRouting = (input.to?.length ?? 0) > 0 || input.channel !== undefined;
  if (explicitRouting) {
    const route = routeFor(ctx, input);
    return writeRouted(ctx, { ...input, re: parent.id }, { ...route, to: parent.fromId }, notes);
  }
  // No routing flags: answer where the parent came from. A channel reply stays in the
  // channel; a direct message goes back to the sender's tray when the sender is live; the
  // rest rides #open (ADR-401: "a reply rides whatever directory the routing flags select").
  const to = parent.fromId;
  if (!WIDE_CLASS.test(to)) throw notFoundError(`message ${parent.id} has no sender id to reply to`);
  let scopes: Scope[] = [{ kind: 'open' }];
  const recipients: Peer[] = [];
  if (parent.scope.kind === 'channel') scopes = [parent.scope];
  else if (parent.scope.kind === 'tray') {
    // A sender on another machine is answered in its tray there (the relay carries it).
    const sender = peersEverywhere(root, ctx.live(), ctx.now()).find((p) => p.id === parent.fromId);
    if (sender) {
      scopes = [{ kind: 'tray', key: attendKey(sender.origin) }];
      recipients.push(sender);
    }
  }
  return writeRouted(ctx, { ...input, re: parent.id }, { scopes, to, recipients }, notes);
}
