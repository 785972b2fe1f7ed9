// Peers and address books as data, for the pure chat state (tools/chat/state/): the shape the
// verbs' address book (tools/verbs/address.ts) hands the chat, without a bus.

import type { AddressBook, Peer } from '../../tools/bus/presence/index.js';

/** A live party (or, with `gone`, one the bus has known). */
export function peer(id: string, name: string, kind: 'agent' | 'human' = 'agent', extra: Partial<Peer> = {}): Peer {
  return { id, name, kind, origin: `/work/${name}`, presence: [], lastSeen: 0, ...extra };
}

/** A book over `live`, with `known` as its first tier of parties that are not live. */
export function bookOf(live: Peer[], known: Peer[] = []): AddressBook {
  return { peers: live, opts: { cwd: '/work', home: '/home/me', localHost: null, known: [() => known] } };
}
