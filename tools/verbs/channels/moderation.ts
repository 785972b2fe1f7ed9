// Moderation: invite, kick, dissolve, purge (issue #3 §3, issue #9 §1). Every check happens
// before anything is written; every change to the membership store is one locked
// read-modify-write.

import { rmSync } from 'node:fs';
import type { VerbCtx } from '../context.js';
import { type Channel, unknownChannel, readChannels, updateChannels } from '../../bus/channels/index.js';
import { AttendError, EXIT, notFoundError, refusedError, usageError, verbHint } from '../../wire/errors.js';
import { scopeDir, scopeDirName } from '../../bus/store/index.js';
import { removeCache } from '../../bus/store/index.js';
import { writeNotice } from '../../bus/channels/index.js';
import { checkReach } from '../../bus/trust/index.js';
import { type PurgeResult, purgeChannel } from '../../bus/upkeep/index.js';
import type { Peer } from '../../bus/presence/index.js';
import { listIds } from '../../bus/store/index.js';
import { resolveTarget } from '../../bus/presence/index.js';
import { localHostName, peersEverywhere } from '../../bus/presence/index.js';
import { printable } from '../../wire/names.js';
import { neutralize, plural } from '../../wire/render.js';
import { type Names, checkChannelRule, livenessOf, namedChannel, namesFor, noticeTarget, parseChannelArg, shownName } from './common.js';

// ---- invite / kick / dissolve ----------------------------------------------------------------

export interface InviteResult {
  channel: string;
  invitee: { id: string; name: string; kind: 'agent' | 'human' };
  notice: string | null;
}

export function runInvite(ctx: VerbCtx, input: { who: string; channel: string }): InviteResult {
  const arg = parseChannelArg(input.channel);
  if (arg.open) throw refusedError('everyone is in #open already');
  const name = arg.name;
  const me = ctx.identity();
  // Members on other machines too (issue 13): the invitation travels with the channel's state.
  const root = ctx.root();
  const peers = peersEverywhere(root, ctx.live(), ctx.now());
  const found = resolveTarget(input.who, peers, { cwd: ctx.cwd, home: ctx.paths.home, localHost: localHostName(root) });
  if (found.length > 1) throw usageError(`'${printable(input.who)}' names ${found.length} sessions: ${found.map((p) => neutralize(p.name)).join(', ')}`, 'name one of them');
  const invitee = found[0] as Peer;
  if (invitee.id === me.id) throw usageError('you cannot invite yourself', verbHint('join', [['channel', name]]));
  // An invitation lets its invitee join, and its notice is mail to the invitee: an agent
  // invites only a node it may reach (issue 20: across groups, that takes a grant).
  if (invitee.record && invitee.host === undefined) ctx.noteLineage([{ id: invitee.id, pid: invitee.record.pid }]);
  const now = ctx.now();
  updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    checkChannelRule(me, name, c, 'invite');
    checkReach(ctx.root(), me, invitee);
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

function findMember(c: Channel, raw: string, names: Names): string | null {
  const t = raw.trim();
  if (c.members[t]) return t;
  const lower = t.toLowerCase();
  const byName = Object.keys(c.members).filter((id) => (c.members[id]?.name ?? names.plain(id) ?? id).toLowerCase() === lower);
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

export function runKick(ctx: VerbCtx, input: { who: string; channel: string }): KickResult {
  const name = namedChannel(input.channel, 'left, so nobody can be kicked from it');
  const me = ctx.identity();
  const names = namesFor(ctx, peersEverywhere(ctx.root(), ctx.live(), ctx.now()));
  if (input.who.trim().length === 0) throw usageError('kick needs a member: a session id, a display name or a username');
  const kicked = updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    const id = findMember(c, input.who, names);
    if (id === null) {
      const members = Object.keys(c.members).map((m) => shownName(names, m));
      throw notFoundError(`'${printable(input.who)}' is not a member of #${name}`, members.length > 0 ? `members: ${members.join(', ')}` : `#${name} has no members`);
    }
    if (id === me.id) throw usageError('you cannot kick yourself', verbHint('leave', [['channel', name]]));
    const member = c.members[id] as { kind: 'agent' | 'human' };
    checkChannelRule(me, name, c, 'kick');
    if (me.kind === 'agent' && member.kind === 'human') throw refusedError(`an agent cannot kick a human (${shownName(names, id)})`);
    delete c.members[id];
    delete c.invites[id];
    // Recorded so the kick reaches a member on another machine (its relay applies it there).
    (c.removed ??= {})[id] = ctx.now();
    return { id, kind: member.kind };
  });
  const notice = writeNotice(ctx.root(), me, ctx.newId, [noticeTarget(ctx, kicked.id, kicked.kind)], `kick: you were removed from #${name}. You no longer receive its messages.`, ctx.signer());
  return { channel: name, kicked: { id: kicked.id, name: names.shown(kicked.id), kind: kicked.kind }, notice: notice?.id ?? null };
}

export interface DissolveResult {
  channel: string;
  notified: string[];
  removedMessages: number;
  notice: string | null;
}

export function runDissolve(ctx: VerbCtx, input: { channel: string; force?: boolean | undefined }): DissolveResult {
  const name = namedChannel(input.channel, 'dissolved');
  const me = ctx.identity();
  const names = namesFor(ctx, ctx.live());
  const alive = livenessOf(ctx);
  const members = updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    checkChannelRule(me, name, c, 'dissolve');
    const others = Object.keys(c.members).filter((id) => id !== me.id);
    const liveOthers = others.filter((id) => alive(id));
    if (liveOthers.length > 0 && !input.force) {
      throw new AttendError(
        `#${name} has live members besides you: ${liveOthers.map((id) => shownName(names, id)).join(', ')}`,
        EXIT.refused,
        verbHint('dissolve', [['channel', name]], { flags: ['force'], then: 'dissolves it anyway (they are told)' }),
      );
    }
    delete store.channels[name];
    (store.dissolved ??= {})[name] = { at: ctx.now(), by: me.id };
    return others.map((id) => ({ id, kind: (c.members[id] as { kind: 'agent' | 'human' }).kind }));
  });
  const dir = scopeDir(ctx.root(), { kind: 'channel', name });
  const removedMessages = listIds(dir).length;
  const notice = writeNotice(
    ctx.root(),
    me,
    ctx.newId,
    members.map((m) => noticeTarget(ctx, m.id, m.kind)),
    `dissolve: #${name} was dissolved; its ${plural(removedMessages, 'message')} ${removedMessages === 1 ? 'is' : 'are'} gone and you are no longer a member.`,
    ctx.signer(),
  );
  // Dissolving is one of the three ways messages leave the disk (docs/architecture.md, "The bus on disk").
  rmSync(dir, { recursive: true, force: true });
  removeCache(ctx.root(), scopeDirName({ kind: 'channel', name }));
  return { channel: name, notified: members.map((m) => m.id), removedMessages, notice: notice?.id ?? null };
}

/**
 * `attend purge <channel>` and chat's `/purge`: delete a channel's history except what a live
 * member has not been shown yet (tools/bus/upkeep/purge.ts holds the rule). Like dissolving, it is
 * for members; a human may purge any channel.
 */
export type { PurgeResult };

export function runPurge(ctx: VerbCtx, input: { channel: string }): PurgeResult {
  const name = namedChannel(input.channel, 'purged');
  const me = ctx.identity();
  const store = readChannels(ctx.root());
  const c = store.channels[name];
  if (!c) throw unknownChannel(store, name);
  checkChannelRule(me, name, c, 'purge');
  const alive = livenessOf(ctx);
  const liveIds = new Set(Object.keys(c.members).filter((id) => alive(id)));
  return purgeChannel(ctx.root(), name, { now: ctx.now(), liveIds });
}

