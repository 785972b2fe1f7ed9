// A node's identity as an A2A AgentCard (seed 000 D6, issue 14 §7): name, description, the
// node's public keys, how to reach it (its inbox directory on this bus) and whether attend
// sees it as a Claude Code session or an external node (a person, another agent).
//
// Signed cards (issue 20, must have 6). A node signs its own card with its Ed25519 key as the
// A2A spec says (§8.4): a JWS (flattened, detached payload) over the canonical card, which is
// the card round-tripped through the v1.0 schema with empty values dropped and `signatures`
// removed, serialized with JCS (RFC 8785). The SDK's canonicalizeAgentCard is that function,
// so a card attend signs verifies with any A2A verifier that has the key, and attend verifies
// cards over the same bytes.
//
// The card carries its own public key (the extension's `public_jwk`), so a peer can check it
// without the bus's key lists: the key's id must be the card's `current_key` (a key id is the
// whole public key, tools/wire/sign.ts), the protected header's `kid` must name it, and the
// signature must match. attend emits a card in that canonical form, and verifying demands it:
// a field the canonical form would drop (one outside the schema, an empty one) is a change
// the signature does not cover, so it fails too, and every alteration of the card fails.

import type { AgentCard } from '@a2a-js/sdk';
import { isDeepStrictEqual } from 'node:util';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { attendKey } from '../../wire/names.js';
import { decodeKeyId, encodeKeyId } from '../../wire/sign.js';
import { localAnchor, useKeyDirectory } from './anchors.js';
import { loadOrCreateKey } from './keys.js';
import { scopeDir } from '../store/layout.js';
import { readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { ensureDir } from '../store/root.js';
import { readLineage } from './lineage.js';

interface CardNode {
  id: string;
  kind: 'agent' | 'human';
  name: string;
  origin: string;
  /** A Claude Code session (it has a session record); other agents and people are external. */
  claude: boolean;
}

/** The extension that carries attend's node fields; readers that do not know it ignore it. */
const NODE_EXTENSION = 'urn:attend:node:v1';

/** A card as JSON, the form attend prints and verifies (the SDK's own codec output). */
export type CardJson = Record<string, unknown>;

interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

function buildCard(root: string, node: CardNode, version: string, signing?: { keyId: string; jwk: PublicJwk }): AgentCard {
  const claude = node.claude;
  const inbox = node.kind === 'agent' ? scopeDir(root, { kind: 'tray', key: attendKey(node.origin) }) : scopeDir(root, { kind: 'open' });
  const keys = localAnchor(root, node.id).keys.map((k) => k.keyId);
  if (signing && !keys.includes(signing.keyId)) keys.push(signing.keyId);
  const parent = readLineage(root).parentOf(node.id) ?? null;
  return {
    name: node.name,
    description: claude
      ? `Claude Code session ${node.id} working in ${node.origin}`
      : node.kind === 'agent'
        ? `${node.name}, an agent that is not Claude Code, on this attend bus (external node)`
        : `${node.name}, a person on this attend bus (external node)`,
    supportedInterfaces: [{ url: pathToFileURL(inbox).href, protocolBinding: 'attend-filesystem', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version,
    capabilities: {
      streaming: false,
      pushNotifications: node.kind === 'agent',
      extensions: [
        {
          uri: NODE_EXTENSION,
          description: 'attend node identity: id, kind, lineage and Ed25519 public keys (NATS nkey text form); reach it with attend send --to <id>',
          required: false,
          params: {
            id: node.id,
            node_kind: claude ? 'claude-code' : 'external',
            from_kind: node.kind,
            parent,
            public_keys: keys,
            current_key: signing?.keyId ?? keys.at(-1) ?? null,
            ...(signing ? { public_jwk: signing.jwk } : {}),
            send: `attend send --to ${node.id} "<message>"`,
          },
        },
      ],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}

// The SDK (and jose under it) load only in the commands that print or check a card.
const sdk = () => import('@a2a-js/sdk');

/** The card in canonical form without signatures: what is signed, and what attend prints. */
async function canonicalBody(card: AgentCard | CardJson): Promise<{ text: string; body: CardJson }> {
  const text = (await sdk()).canonicalizeAgentCard(card as AgentCard);
  return { text, body: JSON.parse(text) as CardJson };
}

/** A node's card, unsigned (the node is not the caller, and has not published a signed one). */
export async function cardFor(root: string, node: CardNode, version = '0.1.0'): Promise<CardJson> {
  return (await canonicalBody(buildCard(root, node, version))).body;
}

function cardsDir(root: string): string {
  return join(root, 'cards');
}

function publishedCardPath(root: string, node: string): string {
  // Node ids that can have a key are file-safe (keys.ts refuses the rest before we get here).
  return join(cardsDir(root), `${node}.json`);
}

/**
 * The caller's own card, signed with its key (created on first use, like a first send), and
 * published under `<bus>/cards/<node>.json` so `attend peers --cards` can show it signed.
 */
export async function signedCardFor(opts: { root: string; keysDir: string; node: CardNode; version: string; now: number }): Promise<CardJson> {
  // The anchor the card's key list is read from is the record beside this key directory.
  useKeyDirectory(opts.root, opts.keysDir);
  const key = loadOrCreateKey({ keysDir: opts.keysDir, root: opts.root, node: opts.node.id, now: opts.now });
  const { createPublicKey } = await import('node:crypto');
  const x = createPublicKey(key.privateKey).export({ format: 'jwk' }).x as string;
  const unsigned = buildCard(opts.root, opts.node, opts.version, { keyId: key.keyId, jwk: { kty: 'OKP', crv: 'Ed25519', x } });
  const { body } = await canonicalBody(unsigned);
  const { generateAgentCardSignature } = await sdk();
  const signed = await generateAgentCardSignature(key.privateKey, { alg: 'EdDSA', typ: 'JOSE', kid: key.keyId })({ ...(body as unknown as AgentCard), signatures: [] });
  // `header` is undefined (no unprotected header): JSON drops it, as the SDK's codec does.
  const card: CardJson = { ...body, signatures: signed.signatures.map((s) => ({ protected: s.protected, signature: s.signature, ...(s.header ? { header: s.header } : {}) })) };
  ensureDir(cardsDir(opts.root));
  writeFileAtomic(publishedCardPath(opts.root, opts.node.id), `${JSON.stringify(card)}\n`);
  return card;
}

/**
 * A node's card for `peers --cards`: the one it signed and published, when that still verifies
 * and names the node's current key; otherwise the card as this bus sees it, unsigned.
 */
export async function publishedCardFor(root: string, node: CardNode, version: string): Promise<CardJson> {
  let text: string | null = null;
  try {
    text = readTextIfAny(publishedCardPath(root, node.id));
  } catch {
    text = null;
  }
  if (text !== null) {
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const check = await verifyCard(parsed, { id: node.id });
    if (check.ok && check.keyId === localAnchor(root, node.id).keys.at(-1)?.keyId) return parsed as CardJson;
  }
  return cardFor(root, node, version);
}

export type CardCheck = { ok: true; node: string; keyId: string; name: string } | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

/** The first place two JSON values differ, as a path (`capabilities.extensions[0].params.x`). */
function firstDifference(a: unknown, b: unknown, path: string): string | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const d = firstDifference(a[k], b[k], path ? `${path}.${k}` : k);
      if (d !== null) return d;
    }
    return null;
  }
  return isDeepStrictEqual(a, b) ? null : path || '(the card)';
}

const quote = (s: unknown) => JSON.stringify(String(s).slice(0, 80));

/**
 * Check a card by itself, trusting nothing but what it carries: its own key must be the
 * card's current key and must have made every signature over the card as it stands.
 * `id`/`keyId`, when given, are what the caller expects (a node id, a key id pinned earlier).
 */
export async function verifyCard(raw: unknown, expect: { id?: string; keyId?: string } = {}): Promise<CardCheck> {
  const bad = (reason: string): CardCheck => ({ ok: false, reason });
  if (!isObject(raw)) return bad('not a card: a card is a JSON object');
  const sigs = raw.signatures;
  if (sigs !== undefined && !Array.isArray(sigs)) return bad('signatures is not a list');
  if (!sigs || sigs.length === 0) return bad('the card is not signed (it has no signatures)');
  const caps = raw.capabilities;
  const exts = isObject(caps) && Array.isArray(caps.extensions) ? caps.extensions : [];
  const ext = exts.find((e): e is Record<string, unknown> => isObject(e) && e.uri === NODE_EXTENSION);
  const params = ext && isObject(ext.params) ? ext.params : null;
  if (!params) return bad(`the card has no attend node extension (${NODE_EXTENSION})`);
  const { id, current_key: current, public_jwk: jwk, public_keys: keys } = params;
  if (typeof id !== 'string' || id === '') return bad('the card names no node id');
  if (typeof current !== 'string' || decodeKeyId(current) === null) return bad('the card names no current_key');
  if (!isObject(jwk) || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || !B64URL_32.test(jwk.x)) return bad('the card carries no Ed25519 public key (public_jwk)');
  const jwkId = encodeKeyId(Uint8Array.from(Buffer.from(jwk.x, 'base64url')));
  if (jwkId !== current) return bad(`the card's public key is ${jwkId}, not its current_key ${current}`);
  if (!Array.isArray(keys) || !keys.includes(current)) return bad('the card’s current_key is not among its public_keys');
  if (expect.id !== undefined && id !== expect.id) return bad(`the card is for ${quote(id)}, not ${quote(expect.id)}`);
  if (expect.keyId !== undefined && current !== expect.keyId) return bad(`the card's key is ${current}, not the expected ${expect.keyId}`);
  let canonical: { text: string; body: CardJson };
  try {
    canonical = await canonicalBody(raw);
  } catch (err) {
    return bad(`not an A2A AgentCard (${String((err as Error).message ?? err).split('\n')[0]?.slice(0, 120)})`);
  }
  const { signatures: _signatures, ...given } = raw;
  const extra = firstDifference(given, canonical.body, '');
  if (extra !== null) return bad(`${extra} is not covered by the signature (outside the A2A card schema, or empty)`);
  const { createPublicKey, verify } = await import('node:crypto');
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const payload = Buffer.from(canonical.text, 'utf8').toString('base64url');
  for (const [i, s] of sigs.entries()) {
    const at = sigs.length > 1 ? ` (signature ${i + 1})` : '';
    if (!isObject(s) || typeof s.protected !== 'string' || typeof s.signature !== 'string') return bad(`a signature needs protected and signature${at}`);
    let header: unknown;
    try {
      header = JSON.parse(Buffer.from(s.protected, 'base64url').toString('utf8'));
    } catch {
      header = null;
    }
    if (!isObject(header)) return bad(`the protected header is not base64url JSON${at}`);
    if (header.alg !== 'EdDSA') return bad(`the signature's alg is ${quote(header.alg)}, not "EdDSA"${at}`);
    if (header.kid !== current) return bad(`signed by key ${quote(header.kid)}, not the card's own key ${current}${at}`);
    const sig = Buffer.from(s.signature, 'base64url');
    if (sig.length !== 64 || !verify(null, Buffer.from(`${s.protected}.${payload}`, 'ascii'), pub, sig)) {
      return bad(`the signature does not match the card (altered after it was signed, or signed by another key)${at}`);
    }
  }
  return { ok: true, node: id, keyId: current, name: typeof raw.name === 'string' ? raw.name : '' };
}
