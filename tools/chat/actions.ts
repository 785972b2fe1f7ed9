// What chat does to the bus, behind one interface, so the UI never knows where an
// operation lives. Sends go through runSend/runReply (the one envelope writer); channel
// verbs go through the channel command functions (tools/cli/commands/channels.ts), so the
// rules (who may kick whom, dissolve refused while others are live, #open cannot be left,
// the owed backlog on an invited join, notices to the members) have one implementation.
// Errors are the commands' AttendErrors; slash.ts turns them into the status line.

import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { readChannels, requireChannel } from '../bus/channels.js';
import { scopeDir } from '../bus/layout.js';
import type { Peer } from '../bus/roster.js';
import { SIGNAL_EXT } from '../bus/signals.js';
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
} from '../cli/commands/channels.js';
import type { Ctx } from '../cli/context.js';
import { runReply, runSend, type SendResult } from '../cli/commands/send.js';
import { idTime } from '../wire/ids.js';
import type { Destination } from './state/routing.js';

/** A channel as the tabs and the reachability check see it. */
export interface ChannelInfo {
  name: string;
  members: string[];
}

export interface PurgeResult {
  removed: number;
  kept: number;
  rule: string;
}

export interface ChatActions {
  send(dest: Destination, body: string): SendResult;
  reply(parentId: string, body: string): SendResult;
  /** The live roster, fresh on every call. */
  peers(): Peer[];
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
}

export interface ActionDeps {
  /** A fresh context for each operation (a fresh roster), always the human identity. */
  makeCtx(): Ctx;
  root: string;
  now(): number;
}

/** Messages younger than this survive /purge when no consumption ledger can prove more. */
export const PURGE_KEEP_MS = 24 * 3600_000;

export function createChatActions(deps: ActionDeps): ChatActions {
  const { root } = deps;
  return {
    send(dest, body) {
      const ctx = deps.makeCtx();
      if (dest.kind === 'open') return runSend(ctx, { message: body });
      if (dest.kind === 'channel') return runSend(ctx, { message: body, channel: dest.channel, to: dest.to.length ? dest.to.map((p) => p.id) : undefined });
      return runSend(ctx, { message: body, to: dest.to.map((p) => p.id) });
    },
    reply(parentId, body) {
      return runReply(deps.makeCtx(), { message: body, re: parentId });
    },
    peers() {
      return deps.makeCtx().live();
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
    purge(c) {
      requireChannel(root, c);
      // Conservative rule until the consumption ledger (tools/bus/ledger.ts) is merged: a
      // live session may not have consumed anything from the last 24 hours, so only older
      // messages go.
      const cutoff = deps.now() - PURGE_KEEP_MS;
      const dir = scopeDir(root, { kind: 'channel', name: c });
      let removed = 0;
      let kept = 0;
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        names = [];
      }
      for (const n of names) {
        if (!n.endsWith(SIGNAL_EXT) || n.startsWith('.')) continue;
        const id = n.slice(0, -SIGNAL_EXT.length);
        let t = idTime(id);
        if (t === null) {
          try {
            t = statSync(join(dir, n)).mtimeMs;
          } catch {
            continue;
          }
        }
        if (t < cutoff) {
          try {
            unlinkSync(join(dir, n));
            removed++;
          } catch {
            kept++;
          }
        } else kept++;
      }
      return { removed, kept, rule: 'kept every message younger than 24 h (no consumption ledger on this bus yet)' };
    },
  };
}
