// `send`: build one envelope from the resolved identity and the routing flags, then fan out
// one file per destination directory (docs/architecture.md, "Addressing"). `reply` (reply.ts) routes through the
// same writer.

import type { VerbCtx } from './context.js';
import { refusedError, usageError, verbHint } from '../wire/errors.js';
import { envelopeFrom } from '../bus/store/index.js';
import { checkSend } from '../bus/trust/index.js';
import { readChannels, requireChannel } from '../bus/channels/index.js';
import type { Peer } from '../bus/presence/index.js';
import { MAX_BODY_BYTES, writeSignals } from '../bus/store/index.js';
import { rememberParties, resolveTargets } from '../bus/presence/index.js';
import { addressBook } from './address.js';
import { type Scope, SIGNAL_ID_CLASS, type Urgency, WIDE_CLASS, bodyProblem, envelopeProblems } from '../wire/envelope.js';
import { attendKey, parseChannelName, printable } from '../wire/names.js';
import { neutralize } from '../wire/render.js';
import { scopeName } from '../wire/display.js';
import { type RecipientDelivery, applyAttention, deliveryFor, describeDelivery } from './delivery.js';

export interface SendInput {
  message: string;
  to?: string[] | undefined;
  channel?: string | undefined;
  re?: string | undefined;
  onBehalfOf?: string | undefined;
  /** Issue 23 §3: `urgent` wakes through every conduit, `quiet` waits for the turn boundary. */
  urgency?: Urgency | undefined;
}

export interface SendResult {
  id: string;
  to: string;
  scopes: string[];
  files: string[];
  recipients: { id: string; name: string; kind: string }[];
  re: string | null;
  urgency: Urgency | null;
  /** Per recipient: shown (by which conduit), at its next turn, waiting or held (issue 21 item 7). */
  delivery: RecipientDelivery[];
  notes: string[];
}

/** The rules every front end applies to a body before anything is written. */
export function checkBody(message: string): void {
  if (message.trim().length === 0) throw usageError('the message is empty', verbHint('send', [['message', 'text']]));
  const problem = bodyProblem(message);
  if (problem !== null) throw usageError(problem);
  const bytes = Buffer.byteLength(message, 'utf8');
  if (bytes > MAX_BODY_BYTES) {
    throw refusedError(`the message is ${bytes} bytes; the limit is ${MAX_BODY_BYTES} (64 KiB)`, 'send a path to a file instead');
  }
}

/** `--urgent` and `--quiet` as the one field they set; both at once is a usage error. */
export function urgencyOf(flags: { urgent?: boolean | undefined; quiet?: boolean | undefined }): Urgency | undefined {
  if (flags.urgent === true && flags.quiet === true) throw usageError('a message is urgent or quiet, not both');
  return flags.urgent === true ? 'urgent' : flags.quiet === true ? 'quiet' : undefined;
}

export function checkMessageId(id: string, flag: string): void {
  if (!SIGNAL_ID_CLASS.test(id)) throw usageError(`${flag} '${printable(id)}' is not a message id (A-Z a-z 0-9 _ -)`);
}

export function checkOnBehalfOf(v: string | undefined): void {
  if (v !== undefined && !WIDE_CLASS.test(v)) throw usageError(`--on-behalf-of '${printable(v)}' is not a valid id`);
}

/**
 * The principal of `--on-behalf-of`, as an id on the wire like every other party: a live
 * display name resolves to its id (issue #10); anything else is carried as given (a claim
 * about someone who need not be live), once it fits the id class.
 */
export function resolvePrincipal(ctx: VerbCtx, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const live = ctx.live();
  if (live.some((p) => p.id === v)) return v;
  const byName = live.filter((p) => p.name.toLowerCase() === v.toLowerCase());
  if (byName.length === 1) return byName[0]!.id;
  checkOnBehalfOf(v);
  return v;
}

export interface Route {
  scopes: Scope[];
  to: string;
  recipients: Peer[];
}

/** The explicit routing flags: `--channel`, `--to`, both, or neither (#open). */
export function routeFor(ctx: VerbCtx, input: Pick<SendInput, 'to' | 'channel'>): Route {
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
  // Read only when a target names nobody live: the known parties (issue 21 item 1).
  const root = ctx.root();
  const book = addressBook(ctx);
  // Members other machines announce are remembered, so they stay addressable while their
  // machine is offline (the hub keeps their mail until it is back).
  rememberParties(root, book.peers.filter((p) => p.host !== undefined), ctx.now());
  const recipients = resolveTargets(targets, book.peers, book.opts);
  const to = recipients.map((p) => p.id).join(',');
  if (!WIDE_CLASS.test(to)) throw usageError(`recipient ids '${printable(to)}' cannot be written on the wire`);
  if (channel !== undefined) {
    // A channel message is read by the channel's members only: one addressed to someone
    // outside it would be accepted and never seen (issue #10 §7), so it is refused.
    const members = readChannels(ctx.root()).channels[channel]?.members ?? {};
    const outside = recipients.filter((p) => members[p.id] === undefined);
    if (outside.length > 0) {
      const first = outside[0]!;
      throw refusedError(
        `${outside.map((p) => neutralize(p.name)).join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in #${channel} and would never see it`,
        verbHint('invite', [['who', first.name], ['channel', channel]], { then: 'brings them in; or send it to them directly without the channel' }),
      );
    }
    return { scopes: [{ kind: 'channel', name: channel }], to, recipients };
  }
  const keys = [...new Set(recipients.map((p) => attendKey(p.origin)))];
  return { scopes: keys.map((key) => ({ kind: 'tray', key })), to, recipients };
}

export function runSend(ctx: VerbCtx, input: SendInput): SendResult {
  checkBody(input.message);
  if (input.re !== undefined) checkMessageId(input.re, '--re');
  checkOnBehalfOf(input.onBehalfOf);
  return writeRouted(ctx, { ...input, onBehalfOf: resolvePrincipal(ctx, input.onBehalfOf) }, routeFor(ctx, input), []);
}

/** Write one envelope into every directory of the route. */
export function writeRouted(ctx: VerbCtx, input: SendInput, route: Route, notes: string[]): SendResult {
  const who = ctx.identity();
  const env = envelopeFrom(who, { to: route.to, body: input.message, re: input.re, onBehalfOf: input.onBehalfOf, urgency: input.urgency });
  const problems = envelopeProblems(env);
  if (problems.length > 0) throw usageError(problems.join('; '));
  const root = ctx.root();
  // Refused at send with the rule that refused it (issue 14 §3); read again at every reader.
  // A live recipient that never ran attend has no lineage yet: its process tree says it now.
  ctx.noteLineage(route.recipients.flatMap((p) => (p.record && p.host === undefined ? [{ id: p.id, pid: p.record.pid }] : [])));
  checkSend(root, who, { scopes: route.scopes, recipients: route.recipients.map((p) => ({ id: p.id, kind: p.kind })) });
  const id = ctx.newId();
  const signer = ctx.signer();
  const files = writeSignals(root, route.scopes, id, env, signer);
  // Whoever has sent is known (issue 21 item 1), with where it reads, so it can be answered
  // once it is not live (a declared agent or a person is never in the roster while it only
  // sends). One small file, rewritten only when the sender is new or changed.
  const self = ctx.live().find((p) => p.id === who.id);
  // Its name is given here if it has none yet (an agent that only ever sends): its own name is Claude Code's.
  rememberParties(root, [{ id: who.id, kind: who.kind, name: who.kind === 'human' ? who.id : (self?.record?.name ?? who.record?.name ?? ''), origin: self?.origin ?? who.origin }], ctx.now());
  // Reading the live roster here also keeps every live agent's name, the writer's included,
  // so its name outlives it in history (issue #10; tools/bus/presence/names.ts via listLive).
  const delivery = deliveryFor(ctx, route.to, route.recipients);
  const focusNotes = applyAttention(ctx, delivery, input.urgency);
  const audience = route.to === '*' ? '#open' : route.to.startsWith('#') ? route.to : 'them';
  return {
    id,
    to: route.to,
    scopes: route.scopes.map(scopeName),
    files,
    recipients: route.recipients.map((p) => ({ id: p.id, name: p.name, kind: p.kind })),
    re: input.re ?? null,
    urgency: input.urgency ?? null,
    delivery,
    // Said only when someone will not see it now: that is when a sender needs to know.
    notes: delivery.every((d) => d.reach.word === 'shown') && delivery.length > 0 ? notes : [...notes, describeDelivery(delivery, audience, ctx.now()), ...focusNotes],
  };
}
