// Listing and settings: channels, create, describe, pin/unpin (issue #3 §2).

import type { VerbCtx } from '../context.js';
import { type Channel, descriptionProblem, unknownChannel, newChannel, pruneStore, readChannels, updateChannels } from '../../bus/channels/index.js';
import { refusedError, usageError, verbHint } from '../../wire/errors.js';
import { remoteMembers } from '../../bus/presence/index.js';
import { splitQualified } from '../../wire/hosts.js';
import { scopeName } from '../../wire/display.js';
import { checkChannelRule, livenessOf, namedChannel, namesFor } from './common.js';

// ---- listing and settings ------------------------------------------------------------------

interface ChannelMember {
  id: string;
  /** Display name; a member of another machine is shown `name@host`. */
  name: string;
  kind: 'agent' | 'human';
  live: boolean;
  /** The machine of a member that lives on another one (issue 13); null here. */
  host: string | null;
}

interface ChannelRow {
  name: string;
  label: string;
  description: string;
  pinned: boolean;
  joined: boolean;
  members: ChannelMember[];
  memberCount: number;
  liveCount: number;
  invited: string[];
  created: number | null;
}

export interface ChannelsResult {
  channels: ChannelRow[];
}

export function runChannels(ctx: VerbCtx, input: { joined?: boolean | undefined } = {}): ChannelsResult {
  const who = ctx.identity();
  const root = ctx.root();
  const peers = ctx.live();
  const alive = livenessOf(ctx);
  const names = namesFor(ctx, peers);
  // Members on other machines are live while their machine's relay lists them.
  const remote = new Set(remoteMembers(root, ctx.now()).map((m) => m.id));
  // Listing is where dead members are noticed most often, so it prunes — but a read writes
  // only when there is something to prune (issue #12 §4): a rewrite wakes every sensor.
  let store = readChannels(root);
  const probe = structuredClone(store);
  const would = pruneStore(probe, alive);
  if (would.members.length > 0 || would.channels.length > 0) {
    store = updateChannels(root, (s) => {
      pruneStore(s, alive);
      return structuredClone(s);
    });
  } else store = probe;
  const rows: ChannelRow[] = [
    {
      name: 'open',
      label: scopeName({ kind: 'open' }),
      description: 'the commons: everyone reads it',
      pinned: true,
      joined: true,
      members: peers.map((p) => ({ id: p.id, name: p.name, kind: p.kind, live: true, host: null })),
      memberCount: peers.length,
      liveCount: peers.length,
      invited: [],
      created: null,
    },
  ];
  for (const name of Object.keys(store.channels).sort()) {
    const c = store.channels[name] as Channel;
    const members = Object.entries(c.members)
      .map(([id, m]): ChannelMember =>
        m.host !== undefined
          ? { id, name: `${m.name ?? splitQualified(id)?.id ?? id}@${m.host}`, kind: m.kind, live: remote.has(id), host: m.host }
          : { id, name: names.shown(id), kind: m.kind, live: alive(id), host: null },
      )
      .sort((a, b) => a.name.localeCompare(b.name));
    rows.push({
      name,
      label: scopeName({ kind: 'channel', name }),
      description: c.description,
      pinned: c.pinned,
      joined: c.members[who.id] !== undefined,
      members,
      memberCount: members.length,
      liveCount: members.filter((m) => m.live).length,
      invited: Object.keys(c.invites).sort(),
      created: c.created,
    });
  }
  return { channels: input.joined ? rows.filter((r) => r.joined) : rows };
}

function checkDescription(text: string): string {
  const problem = descriptionProblem(text);
  if (problem) throw usageError(problem);
  return text.trim();
}

export function runCreate(ctx: VerbCtx, input: { channel: string; description?: string | undefined }): { channel: string; description: string; pinned: true } {
  const name = namedChannel(input.channel, 'created');
  const description = checkDescription(input.description ?? '');
  const who = ctx.identity();
  const now = ctx.now();
  updateChannels(ctx.root(), (store) => {
    if (store.channels[name]) throw refusedError(`#${name} already exists`, verbHint('describe', [['channel', name], ['text', '…']], { then: 'changes its description' }));
    // Created channels are pinned: nobody has joined yet, and an empty unpinned channel is removed.
    store.channels[name] = { ...newChannel(now, who.id), description, pinned: true, describedAt: now, pinnedAt: now };
  });
  return { channel: name, description, pinned: true };
}

export function runDescribe(ctx: VerbCtx, input: { channel: string; text?: string | undefined }): { channel: string; description: string; changed: boolean } {
  const name = namedChannel(input.channel, 'described');
  if (input.text === undefined) {
    const store = readChannels(ctx.root());
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    return { channel: name, description: c.description, changed: false };
  }
  const description = checkDescription(input.text);
  const who = ctx.identity();
  updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    checkChannelRule(who, name, c, 'describe');
    c.description = description;
    c.describedAt = ctx.now();
  });
  return { channel: name, description, changed: true };
}

export function runPin(ctx: VerbCtx, input: { channel: string; pinned: boolean }): { channel: string; pinned: boolean } {
  const name = namedChannel(input.channel, input.pinned ? 'pinned' : 'unpinned');
  const who = ctx.identity();
  updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    checkChannelRule(who, name, c, input.pinned ? 'pin' : 'unpin');
    c.pinned = input.pinned;
    c.pinnedAt = ctx.now();
  });
  return { channel: name, pinned: input.pinned };
}

