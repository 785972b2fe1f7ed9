// Sign on write, verify on read (spec §7, issue 14). The bytes come from tools/wire/sign.ts;
// the keys from tools/bus/trust/keys.ts. A signer is made per invocation and loads the node's key
// only when the first message is signed, so commands that never write pay nothing.

import { readTextIfAny } from '../store/atomic.js';
import type { Envelope, Scope } from '../../wire/envelope.js';
import { isGlobalId } from '../../wire/hosts.js';
import { idTime } from '../../wire/ids.js';
import type { ChainKey } from '../../wire/key-chain.js';
import { type Sidecar, destinationOf, formatSidecar, messageSigningBytes, parseSidecar } from '../../wire/sign.js';
import { type Anchor, dirProblem, keyDirectoryOf, localAnchor, useKeyDirectory } from './anchors.js';
import { signBytes, verifyBytes } from './ed25519.js';
import { type NodeKey, type PublishedKey, anchorLegacyKey, loadOrCreateKey } from './keys.js';
import { localHosts, pinnedHost, readRemoteKeys } from './remote-keys.js';

export const SIG_EXT = '.sig';

export interface Signer {
  /** The sidecar text for one message file (id, directory and envelope are all signed). */
  sidecar(id: string, scope: Scope, env: Envelope): string;
}

interface SignerOptions {
  keysDir: string;
  root: string;
  host: string;
  now: () => number;
  /** Told when a node's key was gone and a new one (a new identity) replaced it. */
  warn?: (line: string) => void;
}

export function createSigner(opts: SignerOptions): Signer {
  // What this process signs for the bus, it reads with the same keys.
  useKeyDirectory(opts.root, opts.keysDir);
  const keys = new Map<string, NodeKey>();
  return {
    sidecar(id, scope, env) {
      const node = env.fromId;
      if (node === undefined) throw new Error('cannot sign an envelope without from_id');
      let key = keys.get(node);
      if (!key) {
        key = loadOrCreateKey({ keysDir: opts.keysDir, root: opts.root, node, now: opts.now() });
        keys.set(node, key);
        if (key.replaced !== undefined) {
          opts.warn?.(`attend: the signing key of ${node} was gone; a new key replaces it, and readers see a new identity (key=new) from now on (attend keys)`);
        }
      }
      const bytes = messageSigningBytes({ id, dest: destinationOf(scope), host: opts.host, envelope: env });
      const s: Sidecar = { keyId: key.keyId, host: opts.host, sig: signBytes(key.privateKey, bytes) };
      return formatSidecar(s);
    },
  };
}

/** A signature by a node's key over bytes the caller made (a domain of their own), and its key id. */
export type DetachedSign = (bytes: Uint8Array) => { keyId: string; sig: string };

/**
 * Sign bytes that are not a message with a node's key, for a receiver outside the bus (the
 * adapters' webhook, wire/sign.ts webhookSigningBytes). The caller's bytes carry their own
 * domain, so no such signature is ever a message's, a delegation's or a rotation's. The key
 * is loaded on the first signature, and again on each (loadOrCreateKey's check is a stat
 * while nothing changed), so a rotated key signs from the next message on.
 */
export function createDetachedSigner(opts: Omit<SignerOptions, 'host' | 'warn'>, node: string): DetachedSign {
  useKeyDirectory(opts.root, opts.keysDir);
  return (bytes) => {
    const key = loadOrCreateKey({ keysDir: opts.keysDir, root: opts.root, node, now: opts.now() });
    return { keyId: key.keyId, sig: signBytes(key.privateKey, bytes) };
  };
}

type SigState = 'ok' | 'none' | 'bad';

export interface SigCheck {
  sig: SigState;
  /** Why `bad` (or `none`); absent for `ok`. */
  sigReason?: string;
  /** The key that signed, for `ok`. */
  keyId?: string;
  /** The signed origin host, for `ok`. */
  host?: string;
  /** Verified with a key another machine (`host`) published for the node: a remote party. */
  remote?: boolean;
  /** For `ok`: the key belongs to a new identity of the node (a reset in its record) since then. */
  newKeySince?: number;
}

/**
 * Keys as readers find them: a local node's from its record in the trust directory
 * (anchors.ts, which caches and re-reads on change); another machine's from the lists its
 * relay recorded there (remote-keys.ts), re-read when a key id is missing or, for a node
 * with none, after NEGATIVE_TTL_MS, so a long-running sensor notices a node's first key
 * soon. Each question reads one file named by the node (and host): the cost does not grow
 * with the number of nodes, keys or hosts.
 */
const NEGATIVE_TTL_MS = 2_000;

interface KeyLookup {
  local(node: string, wanted?: string): Anchor;
  remote(host: string, node: string, wanted: string): PublishedKey[];
}

function createKeyLookup(root: string, now: () => number = Date.now): KeyLookup {
  const remote = new Map<string, { keys: PublishedKey[]; at: number }>();
  const legacyTried = new Set<string>();
  return {
    local(node, wanted) {
      let a = localAnchor(root, node, wanted);
      const keysDir = keyDirectoryOf(root);
      // A key an attend from before the record left behind: anchored once, on first sight.
      if (!a.recorded && keysDir !== undefined && !legacyTried.has(node)) {
        legacyTried.add(node);
        if (anchorLegacyKey({ keysDir, root, node })) a = localAnchor(root, node, wanted);
      }
      return a;
    },
    remote(host, node, wanted) {
      const keysDir = keyDirectoryOf(root);
      if (keysDir === undefined) return [];
      const k = `${host}\n${node}`;
      const hit = remote.get(k);
      if (hit && (hit.keys.some((x) => x.keyId === wanted) || now() - hit.at < NEGATIVE_TTL_MS)) return hit.keys;
      const keys = readRemoteKeys(keysDir, host, node);
      remote.set(k, { keys, at: now() });
      return keys;
    },
  };
}

// One lookup per bus root per process: readers (sensor, drain, inbox, chat) call readMessage
// without a context, and the records only grow, so sharing them is safe.
const lookups = new Map<string, KeyLookup>();
function keyLookupFor(root: string): KeyLookup {
  let l = lookups.get(root);
  if (!l) {
    l = createKeyLookup(root);
    lookups.set(root, l);
  }
  return l;
}

/** The sidecar path for a signal file path. */
export function sidecarPath(signalPath: string): string {
  return `${signalPath.replace(/\.signal$/, '')}${SIG_EXT}`;
}

/**
 * Is `keyId` one that machine `host` published for `node`, as this machine's relay recorded?
 * Only on a bus with a relay (a known host), never for a node of this machine, and for a
 * session id only from the machine it is pinned to (remote-keys.ts).
 */
function remoteKey(root: string, lookup: KeyLookup, host: string, node: string, keyId: string): true | string {
  const local = localHosts(root);
  if (local === null) return 'no relay runs here, so no other machine is known';
  if (local.names.has(host)) return `${host} is this machine`;
  const keysDir = keyDirectoryOf(root);
  if (keysDir === undefined) return 'this process was not told where the key directory is';
  const refused = dirProblem(keysDir);
  if (refused !== null) return refused;
  if (isGlobalId(node)) {
    const p = pinnedHost(keysDir, node);
    if (p !== null && p.host !== host) return `session ${node} is ${p.host}'s (pinned), not ${host}'s`;
  }
  return lookup.remote(host, node, keyId).some((k) => k.keyId === keyId) ? true : `${host} has not published it`;
}

function firstKey(a: Anchor): ChainKey | undefined {
  return a.keys[0];
}

/**
 * Check one message as it sits on disk: its raw envelope (as written, not the legacy
 * derivation), its id, its directory and its sidecar.
 *   ok   a valid signature by a key of the message's from_id: one its record in the key
 *        directory vouches for (a node of this machine), or one the machine the sidecar
 *        names published for it (a party of that machine)
 *   none no sidecar, from a node that has never had a key (or before its first key)
 *   bad  anything else: a sidecar that does not parse, a key that is not from_id's, a
 *        signature that does not match (altered, copied, or another message's sidecar), or
 *        no sidecar where from_id signs its messages (a hand-written line claiming it)
 * The bus's own key lists (keys/*.pub) are never consulted: anyone who can write the bus
 * could add a key to them (issue 20, attack 3).
 */
export function checkSignature(root: string, m: { id: string; scope: Scope; path: string; envelope: Envelope; fromId: string }, lookup: KeyLookup = keyLookupFor(root)): SigCheck {
  let text: string | null = null;
  try {
    // An unsigned message has none: asked without a throw (every reader checks every message).
    text = readTextIfAny(sidecarPath(m.path));
  } catch (err) {
    return { sig: 'bad', sigReason: `cannot read the signature (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (text === null) {
    const first = firstKey(lookup.local(m.fromId));
    const t = idTime(m.id);
    if (first && (t === null || t >= first.created)) return { sig: 'bad', sigReason: `unsigned, but ${m.fromId} signs its messages` };
    return { sig: 'none', sigReason: 'unsigned' };
  }
  const side = parseSidecar(text);
  if (typeof side === 'string') return { sig: 'bad', sigReason: side };
  if (m.envelope.fromId === undefined) return { sig: 'bad', sigReason: 'a signature on a line without from_id' };
  const anchor = lookup.local(m.fromId, side.keyId);
  const own = anchor.keys.find((k) => k.keyId === side.keyId);
  let remote = false;
  if (!own) {
    // A session of this machine signs only with keys its record vouches for; anything else
    // is the key of a party of the machine the sidecar names, when that machine's relay
    // published it for the node (issue 13; remote-keys.ts). A username is every machine's
    // own (`tester` here, `box:tester` there), so a record here does not rule out box's.
    const local = anchor.recorded ? (anchor.problem ?? 'not in its key record') : null;
    const why = local !== null && isGlobalId(m.fromId) ? local : remoteKey(root, lookup, side.host, m.fromId, side.keyId);
    if (why !== true) return { sig: 'bad', sigReason: `the signing key does not belong to ${m.fromId} (${local !== null && local !== why ? `${local}; ` : ''}${why})` };
    remote = true;
  }
  const bytes = messageSigningBytes({ id: m.id, dest: destinationOf(m.scope), host: side.host, envelope: m.envelope });
  if (!verifyBytes(side.keyId, bytes, side.sig)) return { sig: 'bad', sigReason: 'the signature does not match this message (altered, moved, or another message’s signature)' };
  return { sig: 'ok', keyId: side.keyId, host: side.host, ...(remote ? { remote: true } : {}), ...(own?.newSince !== undefined ? { newKeySince: own.newSince } : {}) };
}
