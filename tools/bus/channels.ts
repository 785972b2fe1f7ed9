// Channel membership store: one JSON file, read-modify-write under a lock, written
// atomically, so no concurrent update is ever lost (issue #3 §2).

import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { stateDir } from './layout.js';
import { withLock } from './lock.js';

export interface Member {
  kind: 'agent' | 'human';
  joined: number;
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
}

export interface ChannelStore {
  version: 1;
  channels: Record<string, Channel>;
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
  let text: string;
  try {
    text = readFileSync(channelsFile(root), 'utf8');
  } catch {
    return emptyStore();
  }
  return parseStore(text) ?? emptyStore();
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
    writeFileAtomic(file, `${JSON.stringify(store, null, 1)}\n`);
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
