// Channel membership store: one JSON file, read-modify-write under a lock, written
// atomically, so no concurrent update is ever lost (issue #3 §2).

import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { withLock } from '../store/lock.js';
import { type AttendError, notFoundError, verbHint } from '../../wire/errors.js';

interface Member {
  kind: 'agent' | 'human';
  joined: number;
  /**
   * The machine this member lives on, for members of another machine (issue 13): copied
   * from that machine's channel state by `attend relay`, judged there, never pruned here.
   * Absent for this machine's members.
   */
  host?: string;
  /** A remote member's display name on its machine (presentation only). */
  name?: string;
}

export interface Invite {
  by: string;
  at: number;
}

export interface Channel {
  description: string;
  pinned: boolean;
  created: number;
  createdBy?: string;
  members: Record<string, Member>;
  invites: Record<string, Invite>;
  /** When the description and the pin were last set: across machines the newer one wins. */
  describedAt?: number;
  pinnedAt?: number;
  /** Members kicked, and when: a kick travels to the member's machine (issue 13). */
  removed?: Record<string, number>;
}

export interface ChannelStore {
  version: 1;
  channels: Record<string, Channel>;
  /**
   * Channels dissolved, and when (issue 13): the dissolve travels to every machine, and a
   * message for the channel that arrives from another machine afterwards is parked, never
   * written (it would bring the directory back). A channel made again later (created after
   * `at`) is a new channel.
   */
  dissolved?: Record<string, { at: number; by: string }>;
}

export function channelsFile(root: string): string {
  return join(stateDir(root), 'channels.json');
}

export function emptyStore(): ChannelStore {
  return { version: 1, channels: {} };
}

export function newChannel(now: number, createdBy?: string): Channel {
  const c: Channel = { description: '', pinned: false, created: now, members: {}, invites: {} };
  if (createdBy !== undefined) c.createdBy = createdBy;
  return c;
}

function parseStore(text: string): ChannelStore | null {
  try {
    const o = JSON.parse(text) as Partial<ChannelStore>;
    if (o && o.version === 1 && typeof o.channels === 'object' && o.channels !== null) {
      for (const c of Object.values(o.channels)) {
        c.members ??= {};
        c.invites ??= {};
        c.description ??= '';
        c.pinned ??= false;
      }
      return o as ChannelStore;
    }
  } catch {
    // fall through
  }
  return null;
}

/** Read the store. A missing file is empty; a corrupt one reads as empty (and is kept aside on the next write). */
export function readChannels(root: string): ChannelStore {
  let text: string | null;
  try {
    text = readTextIfAny(channelsFile(root));
  } catch {
    return emptyStore();
  }
  return (text !== null ? parseStore(text) : null) ?? emptyStore();
}

/**
 * Apply `fn` to the current store under the lock and write the result atomically. `fn` may
 * throw to abort without writing. A corrupt store is moved aside (never silently lost).
 */
export function updateChannels<T>(root: string, fn: (store: ChannelStore) => T, onWarn?: (line: string) => void): T {
  const file = channelsFile(root);
  return withLock(`${file}.lock`, () => {
    let store = emptyStore();
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      const parsed = parseStore(text);
      if (parsed) store = parsed;
      else {
        const aside = `${file}.corrupt-${Date.now()}`;
        renameSync(file, aside);
        onWarn?.(`attend: ${file} was not valid; moved it to ${aside} and started afresh`);
      }
    }
    const result = fn(store);
    // Durable with its directory (issue 21): a join a power cut took back would leave a member
    // out of what was sent to the channel after it.
    writeFileAtomic(file, `${JSON.stringify(store, null, 1)}\n`, { syncDir: true });
    return result;
  });
}

/** Channels `id` has joined (bare names, no `#`). */
export function joinedChannels(root: string, id: string): string[] {
  const store = readChannels(root);
  return Object.keys(store.channels)
    .filter((name) => store.channels[name]?.members[id] !== undefined)
    .sort();
}

/** Move every membership and invitation of `from` to `to` (a `/clear`). */
export function renameMember(store: ChannelStore, from: string, to: string): void {
  for (const c of Object.values(store.channels)) {
    const m = c.members[from];
    if (m) {
      delete c.members[from];
      c.members[to] ??= m;
    }
    const inv = c.invites[from];
    if (inv) {
      delete c.invites[from];
      c.invites[to] ??= inv;
    }
  }
}

export const MAX_DESCRIPTION = 200;

// C0/C1 controls, DEL, and the invisible or direction-changing characters that could make
// one line display as two or hide text (same set `neutralize` shows as data).
const NON_PRINTABLE = /[\u0000-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2028\u2029\u2060-\u2069\uFEFF]/;

/** A description is one printable line; returns the reason it is refused, or null. */
export function descriptionProblem(text: string): string | null {
  if (NON_PRINTABLE.test(text)) return 'a description must be one printable line (no control characters, line breaks or invisible characters)';
  if (Array.from(text).length > MAX_DESCRIPTION) return `a description is at most ${MAX_DESCRIPTION} characters`;
  return null;
}

interface PruneResult {
  members: { channel: string; id: string }[];
  channels: string[];
}

/**
 * Drop dead agent members and then every unpinned channel left empty (issue #3 §4). Humans
 * are principals, not processes: they stay members until they leave or are kicked. Callers
 * judge an agent dead only on positive evidence (no live record, no fresh heartbeat, and its
 * registered process gone), so a misconfigured CLAUDE_CONFIG_DIR cannot empty every channel.
 */
export function pruneStore(store: ChannelStore, isAlive: (id: string) => boolean): PruneResult {
  const out: PruneResult = { members: [], channels: [] };
  for (const [name, c] of Object.entries(store.channels)) {
    for (const [id, m] of Object.entries(c.members)) {
      // A member of another machine is judged there (its relay drops it when it leaves).
      if (m.kind === 'human' || m.host !== undefined || isAlive(id)) continue;
      delete c.members[id];
      out.members.push({ channel: name, id });
    }
    if (!c.pinned && Object.keys(c.members).length === 0) {
      delete store.channels[name];
      out.channels.push(name);
    }
  }
  return out;
}

/** Is `name` dissolved with no newer channel of that name here? (A late message is not written.) */
export function dissolvedChannel(store: ChannelStore, name: string): { at: number; by: string } | null {
  const t = store.dissolved?.[name];
  if (!t) return null;
  const c = store.channels[name];
  return c && c.created > t.at ? null : t;
}

/** The one-line "no such channel" error, listing the channels that do exist. */
export function unknownChannel(store: ChannelStore, name: string): AttendError {
  const names = Object.keys(store.channels).sort();
  return notFoundError(
    `no channel #${name}`,
    names.length > 0 ? `channels: ${names.map((n) => `#${n}`).join(', ')}` : verbHint('join', [['channel', name]], { then: 'creates it' }),
  );
}

/**
 * `attend send --channel x` needs #x to exist (exit 1 with the list otherwise). Members and
 * non-members alike may post: a channel is a shared room, and a non-member simply does not
 * receive the replies unless it joins.
 */
export function requireChannel(root: string, name: string): void {
  const store = readChannels(root);
  if (!store.channels[name]) throw unknownChannel(store, name);
}
