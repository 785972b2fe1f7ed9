// What this bus knows about other machines, written by the relay (tools/relay) and read by
// every front end without speaking NATS: the members live on other hosts, and which
// messages were imported from them (so cleanup never judges those by local liveness).
//
//   <root>/relay/remote.json     { updated, hosts: { <host>: { seen, members: [...] } } }
//   <root>/relay/imported.log    one `<dir> <id>` line per imported message, appended

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileStamp, readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { ensureDir } from '../store/root.js';
import type { Peer } from './peer.js';
import type { Reach } from '../../wire/display.js';
import { qualifyId } from '../../wire/hosts.js';

export interface RemoteMember {
  id: string;
  kind: 'agent' | 'human';
  name: string;
  origin: string;
  host: string;
  status?: string;
  /** Nothing delivers to it (kept for relays that announce no `reach`). */
  deaf?: boolean;
  /** How a message reaches it, as its own machine judges (tools/bus/presence/reach.ts). */
  reach?: Reach;
}

export interface RemoteRoster {
  updated: number;
  /** The presence TTL the relay runs with: a host not refreshed within it has left. */
  ttlMs?: number;
  hosts: Record<string, { seen: number; members: RemoteMember[] }>;
}

export function relayStateDir(root: string): string {
  return join(root, 'relay');
}

export function remoteFile(root: string): string {
  return join(relayStateDir(root), 'remote.json');
}

export function importedLog(root: string): string {
  return join(relayStateDir(root), 'imported.log');
}

export function readRemoteRoster(root: string): RemoteRoster {
  try {
    const text = readTextIfAny(remoteFile(root));
    const v = text === null ? null : (JSON.parse(text) as RemoteRoster);
    if (v && typeof v.hosts === 'object' && v.hosts !== null) return v;
  } catch {
    // none yet, or torn by hand: nobody remote
  }
  return { updated: 0, hosts: {} };
}

/** The last roster indexed by member (remoteHosts): its file, that file's stamp, the index. */
let indexed: { file: string; stamp: string; hosts: ReadonlyMap<string, string> } | undefined;

/**
 * Which host each remote member is on (the first host that lists it), parsed once per change
 * of the roster file: the relay asks for every message to a tray, and a roster of a hundred
 * sessions elsewhere is a JSON file worth not parsing per message. Callers must not change it.
 */
export function remoteHosts(root: string): ReadonlyMap<string, string> {
  const file = remoteFile(root);
  const stamp = fileStamp(file);
  if (indexed && indexed.file === file && indexed.stamp === stamp) return indexed.hosts;
  const hosts = new Map<string, string>();
  for (const [h, v] of Object.entries(readRemoteRoster(root).hosts)) for (const m of Array.isArray(v?.members) ? v.members : []) if (!hosts.has(m.id)) hosts.set(m.id, h);
  indexed = { file, stamp, hosts };
  return hosts;
}

export function writeRemoteRoster(root: string, roster: RemoteRoster): void {
  ensureDir(relayStateDir(root));
  // Rewritten on every beat from every other host and aged by time: not synced (a torn one
  // after a crash reads as nobody remote until the next beat).
  writeFileAtomic(remoteFile(root), `${JSON.stringify(roster)}\n`, { sync: false });
}

/**
 * Members on other hosts. A host the relay stopped hearing from drops out after `ttlMs`.
 * Ids are as this machine names them (tools/wire/hosts.ts): a session id as it is, anyone
 * else qualified with their host (`box:aaron`), so a person elsewhere is never taken for
 * this machine's person of the same username.
 */
export function remoteMembers(root: string, now: number): RemoteMember[] {
  const roster = readRemoteRoster(root);
  const ttlMs = roster.ttlMs ?? 60_000;
  const out: RemoteMember[] = [];
  for (const [host, h] of Object.entries(roster.hosts)) {
    if (now - h.seen > ttlMs) continue;
    for (const m of h.members) out.push({ ...m, id: qualifyId(m.id, host), host });
  }
  return out;
}

/** `<dir>/<id>` of every message the relay imported. */
export function readImported(root: string): Set<string> {
  const out = new Set<string>();
  let text: string;
  try {
    text = readFileSync(importedLog(root), 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) out.add(`${line.slice(0, sp)}/${line.slice(sp + 1)}`);
  }
  return out;
}

/** Members on other machines as peers (with `host`), for `--to`, `peers` and replies. */
function remotePeers(root: string, now: number): Peer[] {
  return remoteMembers(root, now).map((m): Peer => {
    const reach = m.reach ?? (m.deaf === true ? { word: 'waiting' as const, since: null } : undefined);
    return { id: m.id, kind: m.kind, origin: m.origin, name: m.name, presence: [], lastSeen: now, host: m.host, ...(reach !== undefined ? { reach } : {}) };
  });
}

/** Live here and on every machine the relay hears from; local first. */
export function peersEverywhere(root: string, live: Peer[], now: number): Peer[] {
  const local = new Set(live.map((p) => p.id));
  return [...live, ...remotePeers(root, now).filter((p) => !(p.kind === 'agent' && local.has(p.id)))];
}

/** This machine's name on the hub, when a relay is configured or has run here. */
export function localHostName(root: string): string | null {
  for (const f of ['status.json', 'config.json']) {
    try {
      const text = readTextIfAny(join(relayStateDir(root), f));
      const v = text === null ? null : (JSON.parse(text) as { host?: unknown } | null);
      if (typeof v?.host === 'string') return v.host;
    } catch {
      // not there
    }
  }
  return null;
}

export interface RelayHealth {
  configured: boolean;
  running: boolean;
  connected: boolean;
  host: string | null;
  hub: string | null;
  lastContact: number | null;
  parked: number;
  /** The running relay's last error (a refused certificate while it cannot connect), or null. */
  lastError: string | null;
  /** What waits, per direction, and why (relayWaiting). */
  waiting: { out: RelayWaiting; in: RelayWaiting };
}

/** Messages that wait in one direction of the relay, and why. */
export interface RelayWaiting {
  /** How many (null when nobody knows: no relay running). */
  count: number | null;
  /** When the oldest of them was found (outbound only), or null. */
  since: number | null;
  /** Why they wait, or null when they are merely in flight. */
  reason: string | null;
  /** Parked for good in this direction (refused by the hub, or bad input), never retried. */
  parked: number;
}

/** An outbound message unacknowledged for longer than this is reported as stuck, with a reason. */
export const RELAY_STUCK_MS = 3_000;

/** The fields of relay/status.json (tools/relay/store.ts RelayStatus) this reads. */
interface WaitFields {
  connected?: unknown;
  outboundBacklog?: unknown;
  outboundSince?: unknown;
  inboundBacklog?: unknown;
  lastError?: unknown;
  hubView?: unknown;
}

const num = (v: unknown) => (typeof v === 'number' ? v : null);

/**
 * What waits each way and why, from the relay's last status: the one answer `attend relay
 * status`, `attend status` and `attend doctor` give. A message unpublished for more than a
 * few seconds always has a reason; it is never shown as nothing waiting.
 */
export function relayWaiting(st: WaitFields | null, running: boolean, now: number, parked: { out: number; in: number }): { out: RelayWaiting; in: RelayWaiting } {
  const hv = (typeof st?.hubView === 'object' && st.hubView !== null ? st.hubView : {}) as { problemKind?: unknown; problem?: unknown };
  const problem = typeof hv.problem === 'string' ? hv.problem : null;
  const reason = (count: number | null, since: number | null): string | null => {
    if (!count) return null;
    if (!running) return 'the relay is not running';
    if (st?.connected !== true) return `not connected to the hub${typeof st?.lastError === 'string' ? ` (${st.lastError})` : ''}`;
    if (hv.problemKind === 'no-quorum') return `no replica quorum on the hub (${problem ?? 'the stream has no leader'})`;
    if (hv.problemKind === 'refused') return `refused by the hub${problem ? `: ${problem}` : ''}`;
    if (since !== null && now - since > RELAY_STUCK_MS) return `not acknowledged by the hub for ${Math.round((now - since) / 1000)}s${typeof st.lastError === 'string' ? ` (${st.lastError})` : ''}`;
    return null;
  };
  // A relay that is not running still leaves what it found: counted as unknown, but a reason given.
  const out = running ? num(st?.outboundBacklog) : null;
  const since = running ? num(st?.outboundSince) : null;
  const inn = running ? num(st?.inboundBacklog) : null;
  return {
    out: { count: out, since, reason: reason(out, since), parked: parked.out },
    in: { count: inn, since: null, reason: reason(inn, null), parked: parked.in },
  };
}

/** One direction as a phrase: `4, oldest 12s: no replica quorum on the hub (…); 1 parked`. */
export function waitingText(w: RelayWaiting, now: number): string {
  const age = w.since !== null && w.count ? `, oldest ${Math.max(0, Math.round((now - w.since) / 1000))}s` : '';
  const parked = w.parked > 0 ? `; ${w.parked} parked` : '';
  return `${w.count ?? '-'}${age}${w.reason ? `: ${w.reason}` : ''}${parked}`;
}

/**
 * What `attend status` and `attend doctor` say about the relay, from the files it keeps
 * (relay/config.json, relay/status.json, relay/parked/); null when none ever ran here.
 */
export function relayHealth(root: string, now: number, alive: (pid: number) => boolean): RelayHealth | null {
  const read = (f: string): Record<string, unknown> | null => {
    try {
      return JSON.parse(readFileSync(join(relayStateDir(root), f), 'utf8')) as Record<string, unknown>;
    } catch {
      return null;
    }
  };
  const cfg = read('config.json');
  const st = read('status.json');
  if (!cfg && !st) return null;
  const running = st !== null && typeof st.pid === 'number' && alive(st.pid) && typeof st.updatedAt === 'number' && now - st.updatedAt < 10_000;
  let names: string[] = [];
  try {
    names = readdirSync(join(relayStateDir(root), 'parked')).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  } catch {
    // none
  }
  const parked = names.length;
  // The kind is the file name's last part (tools/relay/store.ts park).
  const parkedOut = names.filter((n) => n.endsWith('-outbound.json')).length;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    configured: cfg !== null,
    running,
    connected: running && st?.connected === true,
    host: str(st?.host) ?? str(cfg?.host),
    hub: str(st?.hub) ?? str(cfg?.server),
    lastContact: typeof st?.lastContact === 'number' ? st.lastContact : null,
    parked,
    lastError: running ? str(st?.lastError) : null,
    waiting: relayWaiting(st, running, now, { out: parkedOut, in: parked - parkedOut }),
  };
}
