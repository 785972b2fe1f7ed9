// `reply`: thread under a message — the one given with `re`, else the newest one shown to
// this identity — and route it so that its `to` and its destination agree (issue #9 §5).

import type { VerbCtx } from './context.js';
import { notFoundError, verbHint } from '../wire/errors.js';
import type { Peer } from '../bus/presence/index.js';
import { readSurfaced } from '../bus/delivery/index.js';
import { peersEverywhere } from '../bus/presence/index.js';
import { type Scope, WIDE_CLASS, addressees } from '../wire/envelope.js';
import { attendKey } from '../wire/names.js';
import { lookupMessage } from './inbox.js';
import { type SendInput, type SendResult, checkBody, checkMessageId, checkOnBehalfOf, resolvePrincipal, routeFor, writeRouted } from './send.js';

export function runReply(ctx: VerbCtx, input: SendInput): SendResult {
  checkBody(input.message);
  if (input.re !== undefined) checkMessageId(input.re, '--re');
  checkOnBehalfOf(input.onBehalfOf);
  const who = ctx.identity();
  const parentId = input.re ?? readSurfaced(ctx.root(), who.id)?.id;
  // A reply never falls back to an unthreaded post: a mistyped id on a private reply must
  // not become a public message (issue #9 §5).
  if (parentId === undefined) {
    throw notFoundError('nothing has been shown to you yet to reply to', verbHint('send', [['message', 'text']], { then: 'starts a new conversation' }));
  }
  const parent = lookupMessage(ctx, parentId);
  if (!parent) {
    throw notFoundError(`message ${parentId} was not found; nothing was sent`, verbHint('inbox', [], { then: 'lists message ids' }));
  }
  const threaded = { ...input, re: parent.id, onBehalfOf: resolvePrincipal(ctx, input.onBehalfOf) };
  const explicit = (input.to?.length ?? 0) > 0 || input.channel !== undefined;
  // Routing flags choose the destination, and `to` is whoever they name: a reply's `to`
  // and the directory it lands in always agree.
  if (explicit) return writeRouted(ctx, threaded, routeFor(ctx, input), []);
  // No routing flags: answer where the parent came from. A channel reply stays in the
  // channel; a direct message goes back to the sender's tray (by its live origin, else the
  // origin written in the message), never to #open; a broadcast is answered on #open,
  // addressed to its sender: a reply rides whatever directory the routing selects.
  // Answering one's own message (a follow-up) threads to the people it was for, where it
  // went: a reply to oneself would be a direct message nobody else sees.
  if (parent.fromId === who.id) {
    const ids = addressees(parent.to);
    if (parent.scope.kind === 'tray' && ids.length > 0) return writeRouted(ctx, threaded, routeFor(ctx, { to: ids }), []);
    if (parent.scope.kind === 'channel' || parent.scope.kind === 'open') return writeRouted(ctx, threaded, { scopes: [parent.scope], to: parent.to, recipients: [] }, []);
  }
  const to = parent.fromId;
  if (!WIDE_CLASS.test(to)) throw notFoundError(`message ${parent.id} has no sender id to reply to`);
  let scopes: Scope[] = [{ kind: 'open' }];
  const recipients: Peer[] = [];
  if (parent.scope.kind === 'channel') scopes = [parent.scope];
  else if (parent.scope.kind === 'tray') {
    // A sender on another machine is answered in its tray there (the relay carries it).
    const sender = peersEverywhere(ctx.root(), ctx.live(), ctx.now()).find((p) => p.id === parent.fromId);
    if (sender) recipients.push(sender);
    scopes = [{ kind: 'tray', key: attendKey(sender?.origin ?? parent.cwd) }];
  }
  return writeRouted(ctx, threaded, { scopes, to, recipients }, []);
}
