// Which machine a message comes from, as every reader sees it (issue 13). The bytes of a
// message never change across machines, so a message written on box that says
// `from_id:aaron|to:ann` must be READ on laptop as box's aaron writing to box's ann, never
// as laptop's aaron (tools/wire/hosts.ts has the rule).
//
// The origin is the host in the message's signature sidecar, trusted only once the
// signature verifies with a key that host's relay published for the sender
// (tools/bus/trust/signing.ts, tools/bus/trust/remote-keys.ts): another machine cannot make its
// messages read as this machine's parties, and a local file cannot pass for a remote one
// without that machine's key. An unsigned line carries no host and reads as local.
//
// Cost: on a bus that never ran a relay, one cached stat per root; on one that did, one
// small read of each message's sidecar, and for a remote message the signature check
// (which a reader makes anyway before surfacing it).

import { readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { localizeId, localizeTo } from '../../wire/hosts.js';
import { localHostName, relayStateDir } from '../presence/remote.js';
import type { SigCheck } from './signing.js';

interface LocalHosts {
  /** This machine's name on the hub, when it has one. */
  self: string | null;
  /** Names a sidecar written here may carry (the relay's host, the OS hostname). */
  names: Set<string>;
}

const CACHE_MS = 5_000;
const cache = new Map<string, { at: number; hosts: LocalHosts | null }>();

/** Null when no relay ever ran or was configured here: then nothing on this bus is remote. */
function localHosts(root: string, now = Date.now()): LocalHosts | null {
  const hit = cache.get(root);
  if (hit && now - hit.at < CACHE_MS) return hit.hosts;
  let hosts: LocalHosts | null = null;
  if (statSync(relayStateDir(root), { throwIfNoEntry: false })) {
    const self = localHostName(root);
    hosts = { self, names: new Set([hostname(), ...(self !== null ? [self] : [])]) };
  }
  cache.set(root, { at: now, hosts });
  return hosts;
}

/** The `host` line of a sidecar, unverified; null when there is none. */
function sidecarHost(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  return /^host ([^\n]{1,253})$/m.exec(text)?.[1] ?? null;
}

interface Originated {
  fromId: string;
  to: string;
  /** Set for a message from another machine: its host. */
  fromHost?: string;
}

/**
 * Read `m` as this machine names its parties: for a message verified as another machine's,
 * `from_id` and the addressees are localized (`aaron` → `box:aaron`, `laptop:ann` → `ann`).
 */
export function readOrigin<M extends Originated>(root: string, sidecar: string, m: M, verify: () => SigCheck): void {
  const local = localHosts(root);
  if (local === null) return;
  const host = sidecarHost(sidecar);
  if (host === null || local.names.has(host)) return;
  const c = verify();
  if (c.sig !== 'ok' || c.remote !== true || c.host !== host) return;
  m.fromHost = host;
  m.fromId = localizeId(m.fromId, host, local.self);
  m.to = localizeTo(m.to, host, local.self);
}
