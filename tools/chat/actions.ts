// What chat does to the bus, behind one interface, so the UI never knows where an
// operation lives. Sends go through runSend/runReply (the one envelope writer). Channel
// operations call updateChannels directly for now; the channels helper's command functions
// replace them at merge (see the report for which).

import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { newChannel, readChannels, updateChannels } from '../bus/channels.js';
import { notFoundError, refusedError } from '../bus/errors.js';
import { scopeDir } from '../bus/layout.js';
import type { Peer } from '../bus/roster.js';
import { INDEX_NAME } from '../bus/dir-index.js';
import { SIGNAL_EXT } from '../bus/signals.js';
import type { Ctx } from '../cli/context.js';
import { runReply, runSend, type SendResult } from '../cli/commands/send.js';
import { idTime } from '../wire/ids.js';
import type { Destination } from './state/routing.js';

export interface ChannelInfo {
  name: string;
  description: string;
  members: string[];
  invited: string[];
  joined: boolean;
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
  channels(): ChannelInfo[];
  join(channel: string): string;
  leave(channel: string): string;
  create(channel: string, description: string): string;
  describe(channel: string, text: string): string;
  invite(id: string, channel: string): string;
  kick(id: string, channel: string): string;
  dissolve(channel: string): string;
  purge(channel: string): PurgeResult;
}

export interface ActionDeps {
  /** A fresh context for each operation (a fresh roster), always the human identity. */
  makeCtx(): Ctx;
  root: string;
  me: string;
  now(): number;
}

/** Messages younger than this survive /purge when no consumption ledger can prove more. */
export const PURGE_KEEP_MS = 24 * 3600_000;

export function createChatActions(deps: ActionDeps): ChatActions {
  const { root, me } = deps;
  const channelDir = (c: string) => scopeDir(root, { kind: 'channel', name: c });
  const ensureDir = (c: string) => mkdirSync(channelDir(c), { recursive: true, mode: 0o700 });

  function requireChannel(c: string): void {
    if (!readChannels(root).channels[c] && !existsSync(channelDir(c))) throw notFoundError(`no channel #${c}`, '/channels lists them');
  }

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
      const names = new Set(Object.keys(store.channels));
      try {
        for (const d of readdirSync(join(root, 'signals'))) if (d.startsWith('@') && d.length > 1) names.add(d.slice(1));
      } catch {
        // no signals dir yet
      }
      return [...names].sort().map((name) => {
        const c = store.channels[name];
        return {
          name,
          description: c?.description ?? '',
          members: Object.keys(c?.members ?? {}).sort(),
          invited: Object.keys(c?.invites ?? {}).sort(),
          joined: c?.members[me] !== undefined,
        };
      });
    },
    join(c) {
      const created = updateChannels(root, (s) => {
        const had = s.channels[c] !== undefined;
        const ch = (s.channels[c] ??= newChannel(deps.now(), me));
        ch.members[me] = { kind: 'human', joined: deps.now() };
        delete ch.invites[me];
        return !had;
      });
      ensureDir(c);
      return created ? `created and joined #${c}` : `joined #${c}`;
    },
    leave(c) {
      const was = updateChannels(root, (s) => {
        const ch = s.channels[c];
        if (!ch || ch.members[me] === undefined) return false;
        delete ch.members[me];
        return true;
      });
      if (!was) throw notFoundError(`you are not in #${c}`);
      return `left #${c}`;
    },
    create(c, description) {
      updateChannels(root, (s) => {
        if (s.channels[c]) throw refusedError(`#${c} already exists`, `/join #${c}`);
        const ch = newChannel(deps.now(), me);
        ch.description = description;
        ch.members[me] = { kind: 'human', joined: deps.now() };
        s.channels[c] = ch;
      });
      ensureDir(c);
      return `created #${c}${description ? `: ${description}` : ''}`;
    },
    describe(c, text) {
      updateChannels(root, (s) => {
        const ch = s.channels[c];
        if (!ch) throw notFoundError(`no channel #${c}`, `/create #${c} ${text}`);
        ch.description = text;
      });
      return `#${c}: ${text}`;
    },
    invite(id, c) {
      requireChannel(c);
      updateChannels(root, (s) => {
        const ch = (s.channels[c] ??= newChannel(deps.now(), me));
        if (ch.members[id]) throw refusedError(`${id} is already in #${c}`);
        ch.invites[id] = { by: me, at: deps.now() };
      });
      // An agent learns of the invite the way it learns of anything: a message.
      try {
        runSend(deps.makeCtx(), { message: `${me} invites you to #${c}: attend join #${c}`, to: [id] });
      } catch {
        // not live: the invite stays in the store for when it is
      }
      return `invited ${id} to #${c}`;
    },
    kick(id, c) {
      const was = updateChannels(root, (s) => {
        const ch = s.channels[c];
        if (!ch) throw notFoundError(`no channel #${c}`);
        const had = ch.members[id] !== undefined || ch.invites[id] !== undefined;
        delete ch.members[id];
        delete ch.invites[id];
        return had;
      });
      if (!was) throw notFoundError(`${id} is not in #${c}`);
      return `removed ${id} from #${c}`;
    },
    dissolve(c) {
      requireChannel(c);
      updateChannels(root, (s) => {
        delete s.channels[c];
      });
      const dir = channelDir(c);
      let removed = 0;
      try {
        for (const n of readdirSync(dir)) {
          if (n === INDEX_NAME) unlinkSync(join(dir, n));
          if (!n.endsWith(SIGNAL_EXT)) continue;
          unlinkSync(join(dir, n));
          removed++;
        }
        rmdirSync(dir);
      } catch {
        // a file that is not ours keeps the directory; the channel is gone from the store
      }
      return `dissolved #${c} (${removed} message${removed === 1 ? '' : 's'} deleted)`;
    },
    purge(c) {
      requireChannel(c);
      // Conservative rule until the consumption ledger (tools/bus/ledger.ts) is merged: a
      // live session may not have consumed anything from the last 24 hours, so only older
      // messages go.
      const cutoff = deps.now() - PURGE_KEEP_MS;
      const dir = channelDir(c);
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
