// Every party the bus has known, as peers that are not live (issue 21 item 1: a mailbox for
// each): a message to one waits in the tray it reads (its origin's, as when it was live) and
// is delivered when any conduit of it next runs (a session resumed with the same id, the
// person opening chat or `attend inbox`, an agent's next drain).
//
// Known is: recorded in the known-parties file (names.ts: every party the live roster
// listed, every sender attend wrote for, every member another machine's relay announced), a
// session in the registry, a presence record left on disk (a drain's, a sensor's), and the
// person who owns the bus, who is always addressable. Each is a file already read for the
// live roster or one small JSON file parsed once per change: no scan of message history.
// Read only when a target names nobody live, so a send to a live party pays nothing for it.

import { normalizeOrigin } from '../../identity/resolve.js';
import { isGlobalId, splitQualified } from '../../wire/hosts.js';
import { readPresence } from './heartbeats.js';
import { fileStamp } from '../store/atomic.js';
import { namesFile, readKnownEntries } from './names.js';
import type { Peer } from './peer.js';
import { readRegistry } from './registry.js';
import { readRemoteRoster, remoteHosts, remoteMembers } from './remote.js';

export interface KnownOptions {
  /** The person who owns the bus (the Unix user): always addressable. */
  owner?: { id: string; home: string } | undefined;
  now: number;
  /** This machine's name on the hub, when it has one: entries of it are local. */
  localHost?: string | null | undefined;
}

/**
 * Parties that are known and not in `live` (ids), newest seen first, in two tiers: the
 * recorded ones and the owner (`recorded`: one cached file), then also the registry, presence
 * left on disk and machines gone quiet (`all`, read only when the first tier names nobody).
 * `lastSeen` is when it was last seen live or sending (0 when nothing says), `gone` marks them.
 */
export function knownParties(root: string, live: ReadonlySet<string>, opts: KnownOptions, tier: 'recorded' | 'all' = 'all'): Peer[] {
  if (tier === 'recorded') {
    // The cached array itself when nothing is to be left out: the resolver indexes it once
    // per change of the file (tools/bus/presence/targets.ts), not once per send.
    const all = recordedParties(root, opts);
    return live.size === 0 ? all : all.filter((p) => !live.has(p.id));
  }
  return collect(root, live, opts, 'all');
}

// The first tier depends on the known-parties file and the owner only: built once per change
// of the file, so a send to a party that is not live costs what one to a live party does.
let recorded: { key: string; peers: Peer[] } | undefined;

function recordedParties(root: string, opts: KnownOptions): Peer[] {
  const key = `${namesFile(root)}|${fileStamp(namesFile(root))}|${opts.owner?.id ?? ''}|${opts.owner?.home ?? ''}|${opts.localHost ?? ''}`;
  if (recorded?.key !== key) recorded = { key, peers: collect(root, new Set(), opts, 'recorded') };
  return recorded.peers;
}

function collect(root: string, live: ReadonlySet<string>, opts: KnownOptions, tier: 'recorded' | 'all'): Peer[] {
  const out = new Map<string, Peer>();
  const add = (p: Omit<Peer, 'presence' | 'gone'>) => {
    if (live.has(p.id)) return;
    const had = out.get(p.id);
    if (had) {
      had.lastSeen = Math.max(had.lastSeen, p.lastSeen);
      return;
    }
    out.set(p.id, { ...p, presence: [], gone: true });
  };
  const hereHost = (h: string | undefined) => (h === undefined || h === opts.localHost ? undefined : h);
  for (const [id, e] of Object.entries(readKnownEntries(root))) {
    if (e.origin === undefined) continue; // an entry from before origins were kept: a name, not an address
    const host = hereHost(e.host);
    const kind = e.kind ?? (isGlobalId(id) ? 'agent' : 'human');
    add({ id, kind, origin: e.origin, name: e.name, lastSeen: e.seen ?? e.at, ...(host !== undefined ? { host } : {}), ...(e.aliases !== undefined && e.aliases.length > 0 ? { aliases: e.aliases } : {}) });
  }
  if (opts.owner && !live.has(opts.owner.id) && !out.has(opts.owner.id)) {
    add({ id: opts.owner.id, kind: 'human', origin: normalizeOrigin(opts.owner.home), name: opts.owner.id, lastSeen: 0 });
  }
  if (tier === 'recorded') return [...out.values()].sort((a, b) => b.lastSeen - a.lastSeen);
  // Members of machines the relay no longer hears from, while the roster file still has them.
  const current = new Set(remoteMembers(root, opts.now).map((m) => m.id));
  for (const [host, h] of Object.entries(readRemoteRoster(root).hosts)) {
    for (const m of h.members) {
      const id = isGlobalId(m.id) || splitQualified(m.id) ? m.id : `${host}:${m.id}`;
      if (!current.has(id)) add({ id, kind: m.kind, origin: m.origin, name: m.name, lastSeen: h.seen, host });
    }
  }
  for (const [id, e] of Object.entries(readRegistry(root).sessions)) add({ id, kind: 'agent', origin: e.origin, name: id, lastSeen: e.seen });
  for (const r of readPresence(root)) add({ id: r.id, kind: r.kind, origin: normalizeOrigin(r.origin), name: r.name ?? r.id, lastSeen: r.heartbeat });
  return [...out.values()].sort((a, b) => b.lastSeen - a.lastSeen);
}

/**
 * The machine a party lives on, when it is another one: by a qualified id, else by the
 * relay's roster, else by what the bus last knew of it (a machine that is offline now still
 * gets its party's mail when it returns: the hub keeps it).
 */
export function remoteHostOf(root: string, id: string): string | undefined {
  const q = splitQualified(id);
  if (q) return q.host;
  // An unqualified id that is not a session's is this machine's own (a local username).
  if (!isGlobalId(id)) return undefined;
  return remoteHosts(root).get(id) ?? readKnownEntries(root)[id]?.host;
}
