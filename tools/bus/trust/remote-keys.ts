// Public keys of parties on other machines (issue 13 with issue 14; pinned in issue 20):
// recorded by `attend relay` from what each machine's relay published on the hub, read by
// every reader that checks a remote message's signature (tools/bus/trust/signing.ts). They
// live in this user's trust directory, out of the bus, like the local records (anchors.ts): a
// process that can write the bus cannot add a host or a key.
//
//   <trust>/hosts/<host>/<node>.pub   the key ids machine <host> published for its node
//                                     <node>, one `<key id> <created ms>` a line
//   <trust>/pins/<session id>         `<host> <ms>`: the machine that first published a key
//                                     for that session (trust on first use)
//
// (<trust> is the trust directory beside the key directory, anchors.ts trustDirOf.)
//
// A machine can only ever vouch for keys under its own name (the hub lets a host put only
// `<host>.keys.…`), and its list is kept under that name, so no machine can add a key to a
// local node's record, nor to another machine's list. A session id is global (one session,
// one machine: tools/wire/hosts.ts), so it is pinned to the first machine that published a
// key for it; a key for it from any other machine is refused, and so is one for a session
// of this machine. Every other id is its machine's own (`box:aaron`) and cannot collide.
//
// Remote keys count only on a bus whose relay is configured or ran (localHosts): on one that
// never had a relay no host is known, so nothing verifies as another machine's.

import { closeSync, existsSync, openSync, readFileSync, statSync, writeSync, constants as fsc } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isGlobalId } from '../../wire/hosts.js';
import { decodeKeyId } from '../../wire/sign.js';
import { writeFileAtomic } from '../store/atomic.js';
import { FILE_MODE, ensureDir } from '../store/root.js';
import { localHostName, relayStateDir } from '../presence/remote.js';
import { chainPath, openKeyDirectory, trustDirOf } from './anchors.js';
import { markTrustChanged } from './stamp.js';
import type { PublishedKey } from './keys.js';
import { hasParentRecord } from './lineage.js';

const HOST = /^[a-z0-9-]{1,32}$/;
const NODE = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,127}$/;

/** Null when host or node cannot name a file (never a path out of the trust directory). */
function remoteKeysPath(keysDir: string, host: string, node: string): string | null {
  if (!HOST.test(host) || !NODE.test(node)) return null;
  return join(trustDirOf(keysDir), 'hosts', host, `${node}.pub`);
}

function pinPath(keysDir: string, node: string): string | null {
  return NODE.test(node) ? join(trustDirOf(keysDir), 'pins', node) : null;
}

function parseKeyLines(text: string): PublishedKey[] {
  const out: PublishedKey[] = [];
  for (const line of text.split('\n')) {
    const [keyId, created] = line.split(' ');
    if (keyId && decodeKeyId(keyId)) out.push({ keyId, created: Number(created) || 0 });
  }
  return out;
}

/** The keys machine `host` published for its node `node`, oldest first; [] when none. */
export function readRemoteKeys(keysDir: string, host: string, node: string): PublishedKey[] {
  const path = remoteKeysPath(keysDir, host, node);
  if (!path) return [];
  try {
    return parseKeyLines(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

/**
 * Pins as read, per process: one is never rewritten (O_EXCL), so a pin once read stands; "no
 * pin" is asked again after NO_PIN_MS. Every remote message of a session asks.
 */
const NO_PIN_MS = 2_000;
const pins = new Map<string, { pin: { host: string; at: number } | null; at: number }>();

/** The machine a session id is pinned to, with when; null when none published it yet. */
export function pinnedHost(keysDir: string, node: string, now = Date.now()): { host: string; at: number } | null {
  const path = pinPath(keysDir, node);
  if (!path) return null;
  const hit = pins.get(path);
  if (hit && (hit.pin !== null || now - hit.at < NO_PIN_MS)) return hit.pin;
  let pin: { host: string; at: number } | null = null;
  try {
    const [host, at] = readFileSync(path, 'utf8').trim().split(' ');
    if (host && HOST.test(host)) pin = { host, at: Number(at) || 0 };
  } catch {
    // none yet
  }
  if (pins.size > 10_000) pins.clear();
  pins.set(path, { pin, at: now });
  return pin;
}

/** Pin `node` to `host` unless it is pinned already (O_EXCL: the first writer wins). */
function pin(keysDir: string, node: string, host: string, now: number): { host: string; at: number } {
  const path = pinPath(keysDir, node)!;
  ensureDir(join(trustDirOf(keysDir), 'pins'));
  let fd: number;
  try {
    fd = openSync(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      pins.delete(path);
      return pinnedHost(keysDir, node) ?? { host: '?', at: 0 };
    }
    throw err;
  }
  try {
    writeSync(fd, `${host} ${now}\n`);
  } finally {
    closeSync(fd);
  }
  pins.delete(path);
  return { host, at: now };
}

/** Is `node` a node of this machine: a key record or a key file here, or a lineage entry on this bus? */
export function isLocalNode(root: string, keysDir: string, node: string): boolean {
  if (!NODE.test(node)) return false;
  return existsSync(chainPath(keysDir, node)) || existsSync(join(keysDir, `${node}.key`)) || hasParentRecord(root, node);
}

/** Why `host` may not speak for `node` here, or null. `local` says whether `node` is this machine's. */
export function claimProblem(keysDir: string, host: string, node: string, local: (node: string) => boolean): string | null {
  if (!isGlobalId(node)) return null;
  if (local(node)) return `${node} is a session of this machine, not ${host}'s (a session id is one machine's)`;
  const p = pinnedHost(keysDir, node);
  if (p !== null && p.host !== host) return `session ${node} is ${p.host}'s (its key was published there first, pinned ${new Date(p.at).toISOString()}), not ${host}'s (a session id is one machine's)`;
  return null;
}

export type Recorded = { added: boolean } | { refused: string };

/**
 * Record what `host` published for `node` (a key list's text), pinning a session id to the
 * first machine that publishes it. The list only grows, as a local record does, so a key
 * rotated away still verifies the messages it signed.
 */
export function recordRemoteKeys(opts: { keysDir: string; host: string; node: string; text: string; now: number; local: (node: string) => boolean }): Recorded {
  const { keysDir, host, node } = opts;
  const path = remoteKeysPath(keysDir, host, node);
  if (!path) return { refused: `'${host.slice(0, 40)}' and '${node.slice(0, 40)}' cannot name a key list` };
  const problem = claimProblem(keysDir, host, node, opts.local);
  if (problem !== null) return { refused: problem };
  openKeyDirectory(keysDir);
  if (isGlobalId(node)) {
    const p = pin(keysDir, node, host, opts.now);
    // Another relay of this user pinned it a moment ago.
    if (p.host !== host) return { refused: claimProblem(keysDir, host, node, opts.local) ?? `${node} is pinned to ${p.host}` };
  }
  const have = readRemoteKeys(keysDir, host, node);
  const known = new Set(have.map((k) => k.keyId));
  const add = parseKeyLines(opts.text).filter((k) => !known.has(k.keyId) && (known.add(k.keyId), true));
  if (add.length === 0) return { added: false };
  ensureDir(join(trustDirOf(keysDir), 'hosts', host));
  writeFileAtomic(path, [...have, ...add].map((k) => `${k.keyId} ${k.created}\n`).join(''));
  markTrustChanged(trustDirOf(keysDir));
  return { added: true };
}

// --- Which hosts are this machine's ------------------------------------------------------------

interface LocalHosts {
  /** This machine's name on the hub, when it has one. */
  self: string | null;
  /** Names a sidecar written here may carry (the relay's host, the OS hostname). */
  names: Set<string>;
}

const CACHE_MS = 5_000;
const hostsCache = new Map<string, { at: number; hosts: LocalHosts | null }>();

/** Null when no relay ever ran or was configured here: then nothing on this bus is remote. */
export function localHosts(root: string, now = Date.now()): LocalHosts | null {
  const hit = hostsCache.get(root);
  if (hit && now - hit.at < CACHE_MS) return hit.hosts;
  let hosts: LocalHosts | null = null;
  if (statSync(relayStateDir(root), { throwIfNoEntry: false })) {
    const self = localHostName(root);
    hosts = { self, names: new Set([hostname(), ...(self !== null ? [self] : [])]) };
  }
  hostsCache.set(root, { at: now, hosts });
  return hosts;
}
