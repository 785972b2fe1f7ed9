// Channel verbs (issue #3 §1–§3): join, leave, channels (list/create/describe/pin), invite,
// kick, dissolve. Every check happens before anything is written; every change to the
// membership store is one read-modify-write under its lock.

import { rmSync } from 'node:fs';
import type { Ctx } from '../context.js';
import { type Channel, descriptionProblem, unknownChannel, newChannel, pruneStore, readChannels, updateChannels } from '../../bus/channels.js';
import { AttendError, EXIT, notFoundError, refusedError, usageError } from '../../bus/errors.js';
import { scopeDir } from '../../bus/layout.js';
import { writeNotice, type NoticeTarget } from '../../bus/notices.js';
import { OWED_BACKLOG, writeOwed } from '../../bus/owed.js';
import { type PurgeResult, purgeChannel } from '../../bus/purge.js';
import { readRegistry, registeredAlive } from '../../bus/registry.js';
import type { Peer } from '../../bus/roster.js';
import { listIds } from '../../bus/signals.js';
import { resolveTarget } from '../../bus/targets.js';
import { parseChannelName, printable } from '../../wire/names.js';
import { neutralize } from '../../wire/render.js';

export type ChannelArg = { open: true } | { open: false; name: string };

/** `#open`, `open` and `#broadcast` name the commons; anything else must be a valid channel name. */
export function parseChannelArg(raw: string): ChannelArg {
  const bare = raw.startsWith('#') ? raw.slice(1) : raw;
  if (bare === 'open' || bare === 'broadcast') return { open: true };
  const parsed = parseChannelName(raw);
  if (!parsed.ok) throw usageError(parsed.reason);
  return { open: false, name: parsed.name };
}

function namedChannel(raw: string, verb: string): string {
  const arg = parseChannelArg(raw);
  if (arg.open) throw refusedError(`#open is the commons: it cannot be ${verb}`);
  return arg.name;
}

/** A member is alive while it is in the live roster or its registered Claude process runs. */
export function livenessOf(ctx: Ctx): (id: string) => boolean {
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

function nameOf(peers: Peer[], id: string): string {
  return peers.find((p) => p.id === id)?.name ?? id;
}

/** A name for an error line: session names come from records anyone can write. */
function shownName(peers: Peer[], id: string): string {
  return neutralize(nameOf(peers, id));
}

function noticeTarget(ctx: Ctx, id: string, kind: 'agent' | 'human'): NoticeTarget {
  const peer = ctx.live().find((p) => p.id === id);
  const origin = peer?.origin ?? readRegistry(ctx.root()).sessions[id]?.origin;
  return { id, kind, origin };
}

// ---- join / leave --------------------------------------------------------------------------

export interface JoinResult {
  channel: string;
  joined: boolean;
  alreadyMember: boolean;
  created: boolean;
  pinned: boolean;
  /** Set when this join took up an invitation: the backlog owed to the next delivery. */
  invited: { by: string; owed: number; older: number } | null;
}

export function runJoin(ctx: Ctx, input: { channel: string; pin?: boolean | undefined }): JoinResult {
  const arg = parseChannelArg(input.channel);
  if (arg.open) return { channel: 'open', joined: true, alreadyMember: true, created: false, pinned: true, invited: null };
  const name = arg.name;
  const who = ctx.identity();
  const root = ctx.root();
  const now = ctx.now();
  const alive = livenessOf(ctx);
  const r = updateChannels(root, (store) => {
    pruneStore(store, alive);
    let c = store.channels[name];
    const created = c === undefined;
    if (!c) {
      c = newChannel(now, who.id);
      store.channels[name] = c;
    }
    if (input.pin) c.pinned = true;
    const alreadyMember = c.members[who.id] !== undefined;
    c.members[who.id] ??= { kind: who.kind, joined: now };
    const invite = c.invites[who.id];
    delete c.invites[who.id];
    return { created, alreadyMember, pinned: c.pinned, invite: alreadyMember ? undefined : invite };
  }, (line) => ctx.stderr.write(`${line}\n`));
  let invited: JoinResult['invited'] = null;
  if (r.invite) {
    // The invitee was not reading the channel: what was said before it came is owed to its
    // next delivery, newest first, capped (issue #3 §3).
    const ids = listIds(scopeDir(root, { kind: 'channel', name }));
    const owed = ids.slice(-OWED_BACKLOG);
    writeOwed(root, who.id, { channel: name, ids: owed, olderCount: ids.length - owed.length });
    invited = { by: r.invite.by, owed: owed.length, older: ids.length - owed.length };
  }
  return { channel: name, joined: true, alreadyMember: r.alreadyMember, created: r.created, pinned: r.pinned, invited };
}

export interface LeaveResult {
  channel: string;
  left: boolean;
  /** The channel was unpinned and is now empty, so it was removed. */
  removed: boolean;
}

export function runLeave(ctx: Ctx, input: { channel: string }): LeaveResult {
  const name = namedChannel(input.channel, 'left');
  const who = ctx.identity();
  const alive = livenessOf(ctx);
  return updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    if (!c.members[who.id]) throw notFoundError(`you are not a member of #${name}`, `attend channels --joined lists yours`);
    delete c.members[who.id];
    const pruned = pruneStore(store, alive);
    return { channel: name, left: true, removed: pruned.channels.includes(name) };
  });
}

// ---- listing and settings ------------------------------------------------------------------

export interface ChannelMember {
  id: string;
  name: string;
  kind: 'agent' | 'human';
  live: boolean;
}

export interface ChannelRow {
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

export function runChannels(ctx: Ctx, input: { joined?: boolean | undefined } = {}): ChannelsResult {
  const who = ctx.identity();
  const root = ctx.root();
  const peers = ctx.live();
  const alive = livenessOf(ctx);
  // Listing is where dead members are noticed most often, so it prunes (one locked write).
  const store = updateChannels(root, (s) => {
    pruneStore(s, alive);
    return structuredClone(s);
  });
  const rows: ChannelRow[] = [
    {
      name: 'open',
      label: '#open',
      description: 'the commons: everyone reads it',
      pinned: true,
      joined: true,
      members: peers.map((p) => ({ id: p.id, name: p.name, kind: p.kind, live: true })),
      memberCount: peers.length,
      liveCount: peers.length,
      invited: [],
      created: null,
    },
  ];
  for (const name of Object.keys(store.channels).sort()) {
    const c = store.channels[name] as Channel;
    const members = Object.entries(c.members)
      .map(([id, m]) => ({ id, name: nameOf(peers, id), kind: m.kind, live: alive(id) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    rows.push({
      name,
      label: `#${name}`,
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

export function runCreate(ctx: Ctx, input: { channel: string; description?: string | undefined }): { channel: string; description: string; pinned: true } {
  const name = namedChannel(input.channel, 'created');
  const description = checkDescription(input.description ?? '');
  const who = ctx.identity();
  const now = ctx.now();
  updateChannels(ctx.root(), (store) => {
    if (store.channels[name]) throw refusedError(`#${name} already exists`, `attend channels describe ${name} "…" changes its description`);
    // Created channels are pinned: nobody has joined yet, and an empty unpinned channel is removed.
    store.channels[name] = { ...newChannel(now, who.id), description, pinned: true };
  });
  return { channel: name, description, pinned: true };
}

export function runDescribe(ctx: Ctx, input: { channel: string; text?: string | undefined }): { channel: string; description: string; changed: boolean } {
  const name = namedChannel(input.channel, 'described');
  if (input.text === undefined) {
    const store = readChannels(ctx.root());
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    return { channel: name, description: c.description, changed: false };
  }
  const description = checkDescription(input.text);
  updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    c.description = description;
  });
  return { channel: name, description, changed: true };
}

export function runPin(ctx: Ctx, input: { channel: string; pinned: boolean }): { channel: string; pinned: boolean } {
  const name = namedChannel(input.channel, input.pinned ? 'pinned' : 'unpinned');
  updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    c.pinned = input.pinned;
  });
  return { channel: name, pinned: input.pinned };
}

// ---- invite / kick / dissolve ----------------------------------------------------------------

export interface InviteResult {
  channel: string;
  invitee: { id: string; name: string; kind: 'agent' | 'human' };
  notice: string | null;
}

export function runInvite(ctx: Ctx, input: { who: string; channel: string }): InviteResult {
  const arg = parseChannelArg(input.channel);
  if (arg.open) throw refusedError('everyone is in #open already');
  const name = arg.name;
  const me = ctx.identity();
  const peers = ctx.live();
  const found = resolveTarget(input.who, peers, { cwd: ctx.cwd, home: ctx.paths.home });
  if (found.length > 1) throw usageError(`'${printable(input.who)}' names ${found.length} sessions: ${found.map((p) => neutralize(p.name)).join(', ')}`, 'name one of them');
  const invitee = found[0] as Peer;
  if (invitee.id === me.id) throw usageError('you cannot invite yourself', `attend join ${name}`);
  const now = ctx.now();
  updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    if (me.kind === 'agent' && !c.members[me.id]) throw refusedError(`only members of #${name} can invite to it`, `attend join ${name}`);
    if (c.members[invitee.id]) throw refusedError(`${neutralize(invitee.name)} is already a member of #${name}`);
    c.invites[invitee.id] = { by: me.id, at: now };
  });
  const notice = writeNotice(
    ctx.root(),
    me,
    ctx.newId,
    [{ id: invitee.id, kind: invitee.kind, origin: invitee.origin }],
    `invite: you are invited to #${name}. To join and read what was said there: attend join ${name}`,
    ctx.signer(),
  );
  return { channel: name, invitee: { id: invitee.id, name: invitee.name, kind: invitee.kind }, notice: notice?.id ?? null };
}

function findMember(c: Channel, raw: string, peers: Peer[]): string | null {
  const t = raw.trim();
  if (c.members[t]) return t;
  const lower = t.toLowerCase();
  const byName = Object.keys(c.members).filter((id) => nameOf(peers, id).toLowerCase() === lower);
  if (byName.length === 1) return byName[0] as string;
  if (t.length >= 8) {
    const byPrefix = Object.keys(c.members).filter((id) => id.startsWith(t));
    if (byPrefix.length === 1) return byPrefix[0] as string;
  }
  return null;
}

export interface KickResult {
  channel: string;
  kicked: { id: string; name: string; kind: 'agent' | 'human' };
  notice: string | null;
}

export function runKick(ctx: Ctx, input: { who: string; channel: string }): KickResult {
  const name = namedChannel(input.channel, 'left, so nobody can be kicked from it');
  const me = ctx.identity();
  const peers = ctx.live();
  if (input.who.trim().length === 0) throw usageError('kick needs a member: a session id, a display name or a username');
  const kicked = updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    const id = findMember(c, input.who, peers);
    if (id === null) {
      const members = Object.keys(c.members).map((m) => shownName(peers, m));
      throw notFoundError(`'${printable(input.who)}' is not a member of #${name}`, members.length > 0 ? `members: ${members.join(', ')}` : `#${name} has no members`);
    }
    if (id === me.id) throw usageError('you cannot kick yourself', `attend leave ${name}`);
    const member = c.members[id] as { kind: 'agent' | 'human' };
    if (me.kind === 'agent' && member.kind === 'human') throw refusedError(`an agent cannot kick a human (${shownName(peers, id)})`);
    if (me.kind === 'agent' && !c.members[me.id]) throw refusedError(`only members of #${name} can kick from it`);
    delete c.members[id];
    delete c.invites[id];
    return { id, kind: member.kind };
  });
  const notice = writeNotice(ctx.root(), me, ctx.newId, [noticeTarget(ctx, kicked.id, kicked.kind)], `kick: you were removed from #${name}. You no longer receive its messages.`, ctx.signer());
  return { channel: name, kicked: { id: kicked.id, name: nameOf(peers, kicked.id), kind: kicked.kind }, notice: notice?.id ?? null };
}

export interface DissolveResult {
  channel: string;
  notified: string[];
  removedMessages: number;
  notice: string | null;
}

export function runDissolve(ctx: Ctx, input: { channel: string; force?: boolean | undefined }): DissolveResult {
  const name = namedChannel(input.channel, 'dissolved');
  const me = ctx.identity();
  const peers = ctx.live();
  const alive = livenessOf(ctx);
  const members = updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    if (me.kind === 'agent' && !c.members[me.id]) throw refusedError(`only members of #${name} can dissolve it`);
    const others = Object.keys(c.members).filter((id) => id !== me.id);
    const liveOthers = others.filter((id) => alive(id));
    if (liveOthers.length > 0 && !input.force) {
      throw new AttendError(
        `#${name} has live members besides you: ${liveOthers.map((id) => shownName(peers, id)).join(', ')}`,
        EXIT.refused,
        `attend dissolve ${name} --force dissolves it anyway (they are told)`,
      );
    }
    delete store.channels[name];
    return others.map((id) => ({ id, kind: (c.members[id] as { kind: 'agent' | 'human' }).kind }));
  });
  const dir = scopeDir(ctx.root(), { kind: 'channel', name });
  const removedMessages = listIds(dir).length;
  const notice = writeNotice(
    ctx.root(),
    me,
    ctx.newId,
    members.map((m) => noticeTarget(ctx, m.id, m.kind)),
    `dissolve: #${name} was dissolved; its ${removedMessages} messages are gone and you are no longer a member.`,
    ctx.signer(),
  );
  // Dissolving is one of the three ways messages leave the disk (spec §2).
  rmSync(dir, { recursive: true, force: true });
  return { channel: name, notified: members.map((m) => m.id), removedMessages, notice: notice?.id ?? null };
}

/**
 * `attend purge <channel>` and chat's `/purge`: delete a channel's history except what a live
 * member has not been shown yet (tools/bus/purge.ts holds the rule). Like dissolving, it is
 * for members; a human may purge any channel.
 */
export function runPurge(ctx: Ctx, input: { channel: string }): PurgeResult {
  const name = namedChannel(input.channel, 'purged');
  const me = ctx.identity();
  const store = readChannels(ctx.root());
  const c = store.channels[name];
  if (!c) throw unknownChannel(store, name);
  if (me.kind === 'agent' && !c.members[me.id]) throw refusedError(`only members of #${name} can purge it`);
  const alive = livenessOf(ctx);
  const liveIds = new Set(Object.keys(c.members).filter((id) => alive(id)));
  return purgeChannel(ctx.root(), name, { now: ctx.now(), liveIds });
}
