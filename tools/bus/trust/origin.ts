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

import { readFileSync } from 'node:fs';
import { localizeId, localizeTo } from '../../wire/hosts.js';
import { localHosts } from './remote-keys.js';
import type { SigCheck } from './signing.js';

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
