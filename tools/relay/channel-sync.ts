// Channels are one channel across machines (issue 13): each relay publishes its machine's
// view of every channel, and applies the other machines' views to its own channel store.
// No NATS and no IO here: a snapshot in, a store changed in place, what changed out.
//
// Who decides what, so that every machine converges on the same channel:
// - members: each machine is the authority on its own members (it publishes only those);
//   a member of machine H appears elsewhere with `host: H` and goes when H stops listing it;
// - a kick is recorded (`removed`, with its time) and travels, so a member on another
//   machine is dropped there too; a member who joined after the kick stays;
// - description and pin: the newer setting wins (`describedAt`, `pinnedAt`);
// - created/createdBy: the earliest creation wins, so every machine names the same creator;
// - invitations travel, and go once the invitee is a member anywhere;
// - a dissolve travels as a tombstone: a channel created before it is removed everywhere,
//   with its history, and never comes back from an older view or a late message.
//
// Ids in a snapshot are as the publishing machine names them; they are read here with
// tools/wire/hosts.ts localizeId (a username of H becomes `H:name`, `L:x` is our `x`).

import { type Channel, type ChannelStore, type Invite, descriptionProblem } from '../bus/channels/index.js';
import { WIDE_CLASS } from '../wire/envelope.js';
import { localizeId } from '../wire/hosts.js';

/** What another machine says is taken as data: ids in the envelope's class, printable text. */
const okId = (id: unknown): id is string => typeof id === 'string' && id.length <= 200 && WIDE_CLASS.test(id);
const okText = (t: unknown, max: number): t is string => typeof t === 'string' && Array.from(t).length <= max && descriptionProblem(t) === null;

interface ChannelState {
  created: number;
  createdBy?: string;
  description: string;
  describedAt?: number;
  pinned: boolean;
  pinnedAt?: number;
  /** This machine's own members only. */
  members: Record<string, { kind: 'agent' | 'human'; joined: number; name?: string }>;
  invites: Record<string, Invite>;
  removed?: Record<string, number>;
}

interface HostChannels {
  v: 1;
  host: string;
  channels: Record<string, ChannelState>;
  dissolved: Record<string, { at: number; by: string }>;
}

/** This machine's view, to publish: `names` gives its live members' display names. */
export function snapshotOf(store: ChannelStore, host: string, names: ReadonlyMap<string, string>): HostChannels {
  const channels: Record<string, ChannelState> = {};
  for (const [name, c] of Object.entries(store.channels)) {
    const members: ChannelState['members'] = {};
    for (const [id, m] of Object.entries(c.members)) {
      if (m.host !== undefined) continue;
      const shown = names.get(id);
      members[id] = { kind: m.kind, joined: m.joined, ...(shown !== undefined && shown !== id ? { name: shown } : {}) };
    }
    const s: ChannelState = { created: c.created, description: c.description, pinned: c.pinned, members, invites: { ...c.invites } };
    if (c.createdBy !== undefined) s.createdBy = c.createdBy;
    if (c.describedAt !== undefined) s.describedAt = c.describedAt;
    if (c.pinnedAt !== undefined) s.pinnedAt = c.pinnedAt;
    if (c.removed && Object.keys(c.removed).length > 0) s.removed = { ...c.removed };
    channels[name] = s;
  }
  return { v: 1, host, channels, dissolved: { ...(store.dissolved ?? {}) } };
}

export interface Applied {
  /** Channels this view made here. */
  created: string[];
  /** Channels removed here by a dissolve that came with this view: their directories go too. */
  dissolved: string[];
  /** Anything in the store changed (write it). */
  changed: boolean;
}

/** A snapshot's shape, checked before anything of it is used (it came over the network). */
export function parseHostChannels(text: string, host: string): HostChannels | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const o = v as Partial<HostChannels> | null;
  if (!o || o.v !== 1 || o.host !== host || typeof o.channels !== 'object' || o.channels === null || typeof o.dissolved !== 'object' || o.dissolved === null) return null;
  for (const c of Object.values(o.channels)) {
    if (!c || typeof c.created !== 'number' || typeof c.description !== 'string' || typeof c.members !== 'object' || c.members === null || typeof c.invites !== 'object' || c.invites === null) return null;
  }
  return o as HostChannels;
}

/** Apply machine `from`'s view to this machine's (`local`) store, in place. */
export function applySnapshot(store: ChannelStore, snap: HostChannels, from: string, local: string, validName: (name: string) => boolean): Applied {
  const out: Applied = { created: [], dissolved: [], changed: false };
  const loc = (id: string) => localizeId(id, from, local);
  const before = JSON.stringify(store);

  for (const [name, t] of Object.entries(snap.dissolved)) {
    if (!validName(name) || typeof t?.at !== 'number') continue;
    const mine = store.dissolved?.[name];
    if (!mine || mine.at < t.at) (store.dissolved ??= {})[name] = { at: t.at, by: okId(t.by) ? loc(t.by) : from };
    const c = store.channels[name];
    if (c && c.created <= t.at) {
      delete store.channels[name];
      out.dissolved.push(name);
    }
  }

  for (const [name, sc] of Object.entries(snap.channels)) {
    if (!validName(name)) continue;
    const tomb = store.dissolved?.[name];
    if (tomb && sc.created <= tomb.at) continue;
    let c: Channel | undefined = store.channels[name];
    const theirs = Object.entries(sc.members);
    if (!c) {
      // An empty unpinned channel would be pruned at once; do not make it here only for that.
      if (theirs.length === 0 && !sc.pinned) continue;
      c = { description: okText(sc.description, 200) ? sc.description : '', pinned: sc.pinned === true, created: sc.created, members: {}, invites: {} };
      if (okId(sc.createdBy)) c.createdBy = loc(sc.createdBy);
      if (sc.describedAt !== undefined) c.describedAt = sc.describedAt;
      if (sc.pinnedAt !== undefined) c.pinnedAt = sc.pinnedAt;
      store.channels[name] = c;
      out.created.push(name);
    } else {
      if (sc.created < c.created) {
        c.created = sc.created;
        if (okId(sc.createdBy)) c.createdBy = loc(sc.createdBy);
      }
      if ((sc.describedAt ?? 0) > (c.describedAt ?? 0) && okText(sc.description, 200)) {
        c.description = sc.description;
        c.describedAt = sc.describedAt!;
      }
      if ((sc.pinnedAt ?? 0) > (c.pinnedAt ?? 0)) {
        c.pinned = sc.pinned === true;
        c.pinnedAt = sc.pinnedAt!;
      }
    }
    for (const [id, at] of Object.entries(sc.removed ?? {})) {
      if (typeof at !== 'number' || !okId(id)) continue;
      const lid = loc(id);
      if ((c.removed?.[lid] ?? -Infinity) < at) (c.removed ??= {})[lid] = at;
    }
    // `from` is the authority on its own members: exactly those it lists.
    const listed = new Set<string>();
    for (const [id, m] of theirs) {
      if (!okId(id) || typeof m?.joined !== 'number') continue;
      const lid = loc(id);
      listed.add(lid);
      if ((c.removed?.[lid] ?? -Infinity) >= m.joined) continue;
      const here = c.members[lid];
      // A session is on one machine: a local member of that id is not overwritten.
      if (here && here.host === undefined) continue;
      const next = { kind: m.kind === 'human' ? ('human' as const) : ('agent' as const), joined: m.joined, host: from, ...(okText(m.name, 64) ? { name: m.name } : {}) };
      c.members[lid] = next;
    }
    for (const [id, m] of Object.entries(c.members)) if (m.host === from && !listed.has(id)) delete c.members[id];
    for (const [id, inv] of Object.entries(sc.invites)) {
      if (!okId(id) || !okId(inv?.by) || typeof inv?.at !== 'number') continue;
      const lid = loc(id);
      if (c.members[lid]) continue;
      const have = c.invites[lid];
      if (!have || have.at < inv.at) c.invites[lid] = { by: loc(String(inv.by)), at: inv.at };
    }
    // An invitation is taken up by a join anywhere; a kick drops whoever joined before it.
    for (const id of Object.keys(c.invites)) if (c.members[id]) delete c.invites[id];
    for (const [id, at] of Object.entries(c.removed ?? {})) {
      const m = c.members[id];
      if (m && m.joined <= at) delete c.members[id];
    }
  }

  // Channels `from` no longer lists: none of its members are in them any more.
  for (const [name, c] of Object.entries(store.channels)) {
    if (snap.channels[name]) continue;
    for (const [id, m] of Object.entries(c.members)) if (m.host === from) delete c.members[id];
  }
  out.changed = JSON.stringify(store) !== before;
  return out;
}
