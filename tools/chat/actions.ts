// What chat does to the bus, behind one interface, so the UI never knows where an
// operation lives. Sends go through runSend/runReply (the one envelope writer); channel
// verbs go through the channel verbs (tools/verbs/channels/), so the
// rules (who may kick whom, dissolve refused while others are live, #open cannot be left,
// the owed backlog on an invited join, notices to the members) have one implementation.
// Errors are the commands' AttendErrors; slash.ts and submit.ts word them for the status line (hints.ts).

import { readChannels } from '../bus/channels/index.js';
import { type AddressBook, type Peer, readFocusAll } from '../bus/presence/index.js';
import { addressBook } from '../verbs/address.js';
import {
  type ChannelsResult,
  type DissolveResult,
  type InviteResult,
  type JoinResult,
  type KickResult,
  type LeaveResult,
  runChannels,
  runCreate,
  runDescribe,
  runDissolve,
  runInvite,
  runJoin,
  runKick,
  runLeave,
  runPurge,
  type PurgeResult,
} from '../verbs/channels/index.js';
import type { VerbCtx } from '../verbs/context.js';
import { runReply } from '../verbs/reply.js';
import { type ClaimView, runClaim, runClaims, runRelease } from '../verbs/claims.js';
import { runSearch, type SearchResult } from '../verbs/search.js';
import { DEFAULT_WAIT_MS, type WaitOutcome, waitForAnswer } from '../verbs/ask.js';
import { runSend, type SendResult } from '../verbs/send.js';
import type { Urgency } from '../wire/envelope.js';
import type { Destination, PeerRef } from './state/routing.js';

/** A channel as the tabs and the reachability check see it. */
export interface ChannelInfo {
  name: string;
  members: string[];
}

export interface ChatActions {
  send(dest: Destination, body: string, urgency?: Urgency): SendResult;
  reply(parentId: string, body: string, urgency?: Urgency): SendResult;
  /** `/ask`: send to one party, and the wait for its reply (issue 23 §1), pending until it settles. */
  ask(who: string, body: string, signal?: AbortSignal): { sent: SendResult; answer: Promise<WaitOutcome> };
  /** The live roster, fresh on every call. */
  peers(): Peer[];
  /**
   * Whom a draft may name, the send's own address book (tools/verbs/address.ts): the live
   * roster given (the roster poller's read) and elsewhere, then every party the bus has known.
   */
  addressBook(live: Peer[]): AddressBook;
  /**
   * Channel names and member ids for tabs and "would reach nobody", read every roster
   * refresh. A plain read of the store: the shared listing (runChannels) prunes under the
   * lock and rewrites the store, which an open chat should not do every two seconds.
   */
  channels(): ChannelInfo[];
  /** `/channels`: the shared listing. */
  listChannels(): ChannelsResult;
  join(channel: string): JoinResult;
  leave(channel: string): LeaveResult;
  /** Create, then join: the operator who creates a channel from chat is in it. */
  create(channel: string, description: string): { channel: string; description: string; join: JoinResult };
  describe(channel: string, text: string): { channel: string; description: string };
  invite(who: string, channel: string): InviteResult;
  kick(who: string, channel: string): KickResult;
  dissolve(channel: string, force: boolean): DissolveResult;
  purge(channel: string): PurgeResult;
  /** File claims (issue 23 §2): the same verbs as `attend claim`, `release`, `claims`, as the person. */
  claim(paths: string[], ttl: string | undefined, reason: string | undefined): { claims: ClaimView[] };
  release(paths: string[] | undefined): { released: ClaimView[] };
  claims(): { claims: ClaimView[] };
  /** `/search`: the search verb, as the person (everything they may see). */
  search(query: string): SearchResult;
}

interface ActionDeps {
  /** A fresh context for each operation (a fresh roster), always the human identity. */
  makeCtx(): VerbCtx;
  root: string;
  now(): number;
}

export function createChatActions(deps: ActionDeps): ChatActions {
  const { root } = deps;
  return {
    send(dest, body, urgency) {
      const ctx = deps.makeCtx();
      if (dest.kind === 'open') return runSend(ctx, { message: body, urgency });
      // The chat resolved each party already: hand the verb a target that names exactly that
      // one (a human's id is its username, which a session may share as its name).
      const targets = (to: PeerRef[]) => to.map((p) => (p.kind === 'human' ? `human:${p.id}` : p.id));
      if (dest.kind === 'channel') return runSend(ctx, { message: body, channel: dest.channel, to: dest.to.length ? targets(dest.to) : undefined, urgency });
      return runSend(ctx, { message: body, to: targets(dest.to), urgency });
    },
    reply(parentId, body, urgency) {
      return runReply(deps.makeCtx(), { message: body, re: parentId, urgency });
    },
    ask(who, body, signal) {
      const ctx = deps.makeCtx();
      const sent = runSend(ctx, { message: body, to: [who] });
      return { sent, answer: waitForAnswer(ctx, sent, { mode: 'reply', timeoutMs: DEFAULT_WAIT_MS }, signal ? { signal } : {}) };
    },
    peers() {
      const ctx = deps.makeCtx();
      const focus = readFocusAll(root, ctx.now());
      const live = ctx.live();
      return focus.size === 0 ? live : live.map((p) => (focus.has(p.id) ? { ...p, focusUntil: focus.get(p.id)!.until } : p));
    },
    addressBook(live) {
      return addressBook(deps.makeCtx(), live);
    },
    channels() {
      const store = readChannels(root);
      return Object.keys(store.channels)
        .sort()
        .map((name) => ({ name, members: Object.keys(store.channels[name]?.members ?? {}).sort() }));
    },
    listChannels: () => runChannels(deps.makeCtx()),
    join: (channel) => runJoin(deps.makeCtx(), { channel }),
    leave: (channel) => runLeave(deps.makeCtx(), { channel }),
    create(channel, description) {
      const ctx = deps.makeCtx();
      const made = runCreate(ctx, { channel, description });
      return { channel: made.channel, description: made.description, join: runJoin(ctx, { channel: made.channel }) };
    },
    describe(channel, text) {
      const r = runDescribe(deps.makeCtx(), { channel, text });
      return { channel: r.channel, description: r.description };
    },
    invite: (who, channel) => runInvite(deps.makeCtx(), { who, channel }),
    kick: (who, channel) => runKick(deps.makeCtx(), { who, channel }),
    dissolve: (channel, force) => runDissolve(deps.makeCtx(), { channel, force }),
    purge: (channel) => runPurge(deps.makeCtx(), { channel }),
    claim: (paths, ttl, reason) => runClaim(deps.makeCtx(), { paths, ttl, reason }),
    release: (paths) => runRelease(deps.makeCtx(), { paths }),
    claims: () => runClaims(deps.makeCtx()),
    search: (query) => runSearch(deps.makeCtx(), { query, limit: 10 }),
  };
}
