// What the channel verbs share: the channel argument, liveness of members, names for
// messages, notice targets.

import type { VerbCtx } from '../context.js';
import { refusedError, usageError, verbHint } from '../../wire/errors.js';
import type { Channel } from '../../bus/channels/index.js';
import { type NoticeTarget } from '../../bus/channels/index.js';
import { readKnownNames, readRegistry, registeredAlive } from '../../bus/presence/index.js';
import type { Peer } from '../../bus/presence/index.js';
import { partyName } from '../../wire/display.js';
import { parseChannelName } from '../../wire/names.js';
import { neutralize } from '../../wire/render.js';

type ChannelArg = { open: true } | { open: false; name: string };

/** `#open`, `open` and `#broadcast` name the commons; anything else must be a valid channel name. */
export function parseChannelArg(raw: string): ChannelArg {
  const bare = raw.startsWith('#') ? raw.slice(1) : raw;
  if (bare === 'open' || bare === 'broadcast') return { open: true };
  const parsed = parseChannelName(raw);
  if (!parsed.ok) throw usageError(parsed.reason);
  return { open: false, name: parsed.name };
}

export function namedChannel(raw: string, verb: string): string {
  const arg = parseChannelArg(raw);
  if (arg.open) throw refusedError(`#open is the commons: it cannot be ${verb}`);
  return arg.name;
}

/** A member is alive while it is in the live roster or its registered Claude process runs. */
export function livenessOf(ctx: VerbCtx): (id: string) => boolean {
  const live = new Set(ctx.live().map((p) => p.id));
  const reg = readRegistry(ctx.root());
  const now = ctx.now();
  const cache = new Map<string, boolean>();
  return (id) => {
    if (live.has(id)) return true;
    let v = cache.get(id);
    if (v === undefined) {
      v = registeredAlive(reg, id, now);
      cache.set(id, v);
    }
    return v;
  };
}

/**
 * What the channel verbs call a party, by the one rule (tools/wire/display.ts partyName): its
 * live name, else its last known name marked gone (`api (gone)`), else its id, cut. The known
 * names are read once, and only when a party is not live.
 */
export interface Names {
  /** As shown: `api`, `api (gone)`, `api@box`, `1a2b3c4d…`. */
  shown(id: string): string;
  /** As matched against a name someone typed: the live name, else the last known one; null when none. */
  plain(id: string): string | null;
}

export function namesFor(ctx: VerbCtx, peers: Peer[]): Names {
  const live = new Map(peers.map((p) => [p.id, p.name]));
  let known: ReturnType<typeof readKnownNames> | undefined;
  const knownNames = () => (known ??= readKnownNames(ctx.root(), ctx.now()));
  return {
    shown: (id) => (live.has(id) ? (live.get(id) as string) : partyName(id, live, knownNames())),
    plain: (id) => live.get(id) ?? knownNames().get(id) ?? null,
  };
}

/** A name for an error line: session names come from records anyone can write. */
export function shownName(names: Names, id: string): string {
  return neutralize(names.shown(id));
}

export function noticeTarget(ctx: VerbCtx, id: string, kind: 'agent' | 'human'): NoticeTarget {
  const peer = ctx.live().find((p) => p.id === id);
  const origin = peer?.origin ?? readRegistry(ctx.root()).sessions[id]?.origin;
  return { id, kind, origin };
}


/**
 * The one ownership rule for the channel verbs (issue #10 §14), the same in the CLI, chat
 * and MCP, and stated in `--help` (CHANNEL_RULE):
 * - a human (the bus's people, who own it) may do anything;
 * - members may describe, pin, unpin, invite and kick (an agent never kicks a human);
 * - only the channel's creator may dissolve or purge it (its history is theirs to delete).
 * Anyone may create a channel, join one and read its description.
 */
type ChannelAction = 'describe' | 'pin' | 'unpin' | 'invite' | 'kick' | 'dissolve' | 'purge';

export { CHANNEL_RULE } from './rule.js';

export function checkChannelRule(who: { id: string; kind: 'agent' | 'human' }, name: string, c: Channel, action: ChannelAction): void {
  if (who.kind === 'human') return;
  if (action === 'dissolve' || action === 'purge') {
    if (c.createdBy !== who.id) throw refusedError(`only the creator of #${name} or a human can ${action} it`);
    return;
  }
  if (!c.members[who.id]) {
    throw refusedError(`only members of #${name} can ${action === 'invite' ? 'invite to' : action === 'kick' ? 'kick from' : action} it`, verbHint('join', [['channel', name]]));
  }
}
