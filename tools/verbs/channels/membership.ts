// Membership: join (with an invitation's owed backlog) and leave (issue #3 §1).

import type { VerbCtx } from '../context.js';
import { unknownChannel, newChannel, pruneStore, updateChannels } from '../../bus/channels/index.js';
import { checkJoin } from '../../bus/trust/index.js';
import { notFoundError, verbHint } from '../../wire/errors.js';
import { scopeDir } from '../../bus/store/index.js';
import { OWED_BACKLOG, writeOwed } from '../../bus/delivery/index.js';
import { listIds } from '../../bus/store/index.js';
import { livenessOf, namedChannel, parseChannelArg } from './common.js';

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

export function runJoin(ctx: VerbCtx, input: { channel: string; pin?: boolean | undefined }): JoinResult {
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
    const alreadyMember = c.members[who.id] !== undefined;
    // Membership is the grant to read and post (issue 20 attack 7): an existing channel is
    // joined with an invitation, a grant, or a member of one's own group inside.
    if (!created && !alreadyMember) checkJoin(root, who, { name, members: Object.keys(c.members), createdBy: c.createdBy, invited: c.invites[who.id] !== undefined });
    if (input.pin) c.pinned = true;
    c.members[who.id] ??= { kind: who.kind, joined: now };
    const invite = c.invites[who.id];
    delete c.invites[who.id];
    return { created, alreadyMember, pinned: c.pinned, invite: alreadyMember ? undefined : invite };
  }, ctx.warn);
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

export function runLeave(ctx: VerbCtx, input: { channel: string }): LeaveResult {
  const name = namedChannel(input.channel, 'left');
  const who = ctx.identity();
  const alive = livenessOf(ctx);
  return updateChannels(ctx.root(), (store) => {
    const c = store.channels[name];
    if (!c) throw unknownChannel(store, name);
    if (!c.members[who.id]) throw notFoundError(`you are not a member of #${name}`, verbHint('channels', [], { flags: ['joined'], then: 'lists yours' }));
    delete c.members[who.id];
    const pruned = pruneStore(store, alive);
    return { channel: name, left: true, removed: pruned.channels.includes(name) };
  });
}

