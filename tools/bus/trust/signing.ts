// Sign on write, verify on read (spec §7, issue 14). The bytes come from tools/wire/sign.ts;
// the keys from tools/bus/trust/keys.ts. A signer is made per invocation and loads the node's key
// only when the first message is signed, so commands that never write pay nothing.

import { readFileSync } from 'node:fs';
import type { Envelope, Scope } from '../../wire/envelope.js';
import { idTime } from '../../wire/ids.js';
import { type Sidecar, destinationOf, formatSidecar, messageSigningBytes, parseSidecar } from '../../wire/sign.js';
import { type NodeKey, type PublishedKey, loadOrCreateKey, readPublishedKeys, signBytes, verifyBytes } from './keys.js';
import { readRemoteKeys } from './remote-keys.js';

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
}

export function createSigner(opts: SignerOptions): Signer {
  const keys = new Map<string, NodeKey>();
  return {
    sidecar(id, scope, env) {
      const node = env.fromId;
      if (node === undefined) throw new Error('cannot sign an envelope without from_id');
      let key = keys.get(node);
      if (!key) {
        key = loadOrCreateKey({ keysDir: opts.keysDir, root: opts.root, node, now: opts.now() });
        keys.set(node, key);
      }
      const bytes = messageSigningBytes({ id, dest: destinationOf(scope), host: opts.host, envelope: env });
      const s: Sidecar = { keyId: key.keyId, host: opts.host, sig: signBytes(key.privateKey, bytes) };
      return formatSidecar(s);
    },
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
}

/**
 * Published key lists, read once per node and re-read when a key id is missing (a rotation
 * or a node that got its first key since). A negative answer is trusted for NEGATIVE_TTL_MS
 * so a long-running sensor notices a node's first key soon.
 */
const NEGATIVE_TTL_MS = 2_000;

interface KeyLookup {
  keys(node: string, wanted?: string): PublishedKey[];
}

function createKeyLookup(root: string, now: () => number = Date.now): KeyLookup {
  const cache = new Map<string, { keys: PublishedKey[]; at: number }>();
  return {
    keys(node, wanted) {
      const hit = cache.get(node);
      const fresh =
        hit &&
        (wanted === undefined ? hit.keys.length > 0 || now() - hit.at < NEGATIVE_TTL_MS : hit.keys.some((k) => k.keyId === wanted));
      if (hit && fresh) return hit.keys;
      let keys: PublishedKey[] = [];
      try {
        keys = readPublishedKeys(root, node);
      } catch {
        keys = [];
      }
      cache.set(node, { keys, at: now() });
      return keys;
    },
  };
}

// One lookup per bus root per process: readers (sensor, drain, inbox, chat) call readMessage
// without a context, and the lists only grow, so sharing them is safe.
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
 * Check one message as it sits on disk: its raw envelope (as written, not the legacy
 * derivation), its id, its directory and its sidecar.
 *   ok   a valid signature by a key published for the message's from_id
 *   none no sidecar, from a node that has never published a key (or before its first key)
 *   bad  anything else: a sidecar that does not parse, a key that is not from_id's, a
 *        signature that does not match (altered, copied, or another message's sidecar), or
 *        no sidecar where from_id signs its messages (a hand-written line claiming it)
 */
export function checkSignature(root: string, m: { id: string; scope: Scope; path: string; envelope: Envelope; fromId: string }, lookup: KeyLookup = keyLookupFor(root)): SigCheck {
  let text: string | null = null;
  try {
    text = readFileSync(sidecarPath(m.path), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return { sig: 'bad', sigReason: `cannot read the signature (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (text === null) {
    const keys = lookup.keys(m.fromId);
    const first = keys[0];
    const t = idTime(m.id);
    if (first && (t === null || t >= first.created)) return { sig: 'bad', sigReason: `unsigned, but ${m.fromId} signs its messages` };
    return { sig: 'none', sigReason: 'unsigned' };
  }
  const side = parseSidecar(text);
  if (typeof side === 'string') return { sig: 'bad', sigReason: side };
  if (m.envelope.fromId === undefined) return { sig: 'bad', sigReason: 'a signature on a line without from_id' };
  const owned = lookup.keys(m.fromId, side.keyId).some((k) => k.keyId === side.keyId);
  // Not a key of this machine's node: a party of the machine the sidecar names, when that
  // machine's relay published the key for it (issue 13; tools/bus/trust/remote-keys.ts).
  const remote = !owned && readRemoteKeys(root, side.host, m.fromId).some((k) => k.keyId === side.keyId);
  if (!owned && !remote) return { sig: 'bad', sigReason: `the signing key does not belong to ${m.fromId}` };
  const bytes = messageSigningBytes({ id: m.id, dest: destinationOf(m.scope), host: side.host, envelope: m.envelope });
  if (!verifyBytes(side.keyId, bytes, side.sig)) return { sig: 'bad', sigReason: 'the signature does not match this message (altered, moved, or another message’s signature)' };
  return { sig: 'ok', keyId: side.keyId, host: side.host, ...(remote ? { remote: true } : {}) };
}
