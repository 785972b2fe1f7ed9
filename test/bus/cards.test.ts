// Signed A2A cards (issue 20, must have 6): a node's card carries its own key and a JWS by it
// over the canonical card, so a peer checks it without the bus's key lists. Any altered field,
// another key, or a key that is not the card's own fails with a reason.
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CardJson, cardFor, publishedCardFor, signedCardFor, verifyCard } from '../../tools/bus/trust/cards.js';
import { encodeKeyId } from '../../tools/wire/sign.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const keysDir = () => join(bus.home, '.config', 'attend', 'keys');
const NODE = { id: 'sid-card', kind: 'agent' as const, name: 'api', origin: '/srv/a', claude: true };
const sign = (node = NODE) => signedCardFor({ root: bus.root, keysDir: keysDir(), node, version: '1.2.3', now: Date.now() });
const params = (c: CardJson) => ((c.capabilities as { extensions: { params: Record<string, unknown> }[] }).extensions[0]!.params);
const clone = (c: CardJson) => structuredClone(c);

/** Every leaf of a JSON value, as a path and a value. */
function leaves(v: unknown, path: (string | number)[] = []): { path: (string | number)[]; value: unknown }[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => leaves(x, [...path, i]));
  if (typeof v === 'object' && v !== null) return Object.entries(v).flatMap(([k, x]) => leaves(x, [...path, k]));
  return [{ path, value: v }];
}
function setAt(o: unknown, path: (string | number)[], value: unknown): void {
  let at = o as Record<string | number, unknown>;
  for (const p of path.slice(0, -1)) at = at[p] as Record<string | number, unknown>;
  at[path.at(-1)!] = value;
}

describe('signed cards', () => {
  it('a card signed by its node verifies, names its node and key, and survives the SDK codec', async () => {
    const card = await sign();
    const check = await verifyCard(card);
    expect(check).toEqual({ ok: true, node: NODE.id, keyId: params(card).current_key, name: 'api' });
    const jwk = params(card).public_jwk as { x: string };
    expect(encodeKeyId(Uint8Array.from(Buffer.from(jwk.x, 'base64url')))).toBe(params(card).current_key);
    // Through the SDK's types and back: still the same card, and still verified.
    const again = AgentCard.toJSON(AgentCard.fromJSON(card)) as CardJson;
    expect(again).toEqual(card);
    expect((await verifyCard(again)).ok).toBe(true);
    // The SDK's own verifier (any A2A peer's) accepts it with the key the card carries.
    await expect(verifyAgentCardSignature(async () => jwk as never)(AgentCard.fromJSON(card))).resolves.toBeUndefined();
  });

  it('the protected header is the A2A shape: EdDSA, JOSE, kid = the node key id', async () => {
    const card = await sign();
    const sig = (card.signatures as { protected: string; signature: string }[])[0]!;
    expect(JSON.parse(Buffer.from(sig.protected, 'base64url').toString())).toEqual({ alg: 'EdDSA', typ: 'JOSE', kid: params(card).current_key });
    expect(Buffer.from(sig.signature, 'base64url')).toHaveLength(64);
  });

  it('any field altered, added or emptied fails', async () => {
    const card = await sign();
    const body = clone(card);
    delete body.signatures;
    const spots = leaves(body);
    await fc.assert(
      fc.asyncProperty(fc.nat(spots.length - 1), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), async (i, value) => {
        const spot = spots[i]!;
        fc.pre(value !== spot.value);
        const bad = clone(card);
        setAt(bad, spot.path, value);
        expect((await verifyCard(bad)).ok).toBe(false);
      }),
      { numRuns: 200 },
    );
    const added = clone(card);
    added.extra = 'x';
    expect(await verifyCard(added)).toEqual({ ok: false, reason: expect.stringContaining('extra is not covered by the signature') });
    const emptied = clone(card);
    (emptied as { skills?: unknown }).skills = [];
    expect((await verifyCard(emptied)).ok).toBe(false);
  });

  it('another key fails: a re-signed card with a swapped key id, a key that is not the card’s, no signature', async () => {
    const card = await sign();
    const other = await sign({ ...NODE, id: 'sid-other' });
    // Its signature on this card: made by a key the card does not carry.
    const borrowed = { ...clone(card), signatures: other.signatures };
    expect(await verifyCard(borrowed)).toEqual({ ok: false, reason: expect.stringContaining("not the card's own key") });
    // The other node's key put into this card: no longer its current_key's.
    const swapped = clone(card);
    params(swapped).public_jwk = params(other).public_jwk;
    expect(await verifyCard(swapped)).toEqual({ ok: false, reason: expect.stringContaining('not its current_key') });
    // A whole fresh key and id substituted consistently, but the signature is the old key's.
    const { publicKey } = generateKeyPairSync('ed25519');
    const x = publicKey.export({ format: 'jwk' }).x as string;
    const forged = clone(card);
    const kid = encodeKeyId(Uint8Array.from(Buffer.from(x, 'base64url')));
    Object.assign(params(forged), { public_jwk: { kty: 'OKP', crv: 'Ed25519', x }, current_key: kid, public_keys: [kid] });
    expect((await verifyCard(forged)).ok).toBe(false);
    expect(await verifyCard({ ...clone(card), signatures: [] })).toEqual({ ok: false, reason: 'the card is not signed (it has no signatures)' });
    expect(await verifyCard(card, { id: 'sid-other' })).toEqual({ ok: false, reason: expect.stringContaining('is for "sid-card"') });
    expect(await verifyCard(card, { keyId: params(other).current_key as string })).toEqual({ ok: false, reason: expect.stringContaining('not the expected') });
  });

  it('peers see the card a node published while it names its current key; unsigned otherwise', async () => {
    const card = await sign();
    expect(await publishedCardFor(bus.root, NODE, '1.2.3')).toEqual(card);
    const never = await publishedCardFor(bus.root, { ...NODE, id: 'sid-never' }, '1.2.3');
    expect(never.signatures).toBeUndefined();
    expect(await verifyCard(never)).toEqual({ ok: false, reason: 'the card is not signed (it has no signatures)' });
  });

  it('cardFor marks a human and an agent that is not Claude Code external', async () => {
    expect(params(await cardFor(bus.root, { id: 'codex-1', kind: 'agent', name: 'codex-1', origin: '/w', claude: false }))).toMatchObject({ node_kind: 'external', from_kind: 'agent' });
    expect(params(await cardFor(bus.root, { id: 'aaron', kind: 'human', name: 'aaron', origin: '/h', claude: false }))).toMatchObject({ node_kind: 'external' });
  });
});
