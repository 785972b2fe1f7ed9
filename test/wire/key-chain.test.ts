// The rotation record (issue 20 §2, tools/wire/key-chain.ts): each key after the first is
// signed by the one before it; a link that does not hold refuses every key from there on.
// Real Ed25519 keys from node:crypto; the record's rule is pure.
import { type JsonWebKey, type KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ChainLink, type LinkKind, formatLink, readChain, rotationSigningBytes } from '../../tools/wire/key-chain.js';
import { decodeKeyId, encodeKeyId } from '../../tools/wire/sign.js';

interface Pair {
  keyId: string;
  key: KeyObject;
}

const pair = (): Pair => {
  // Generated as JWK (tools/bus/trust/keys.ts newKey says why not exported afterwards).
  const { privateKey: jwk } = generateKeyPairSync('ed25519', { publicKeyEncoding: { format: 'jwk' }, privateKeyEncoding: { format: 'jwk' } });
  const x = (jwk as unknown as { x: string }).x;
  return { keyId: encodeKeyId(Uint8Array.from(Buffer.from(x, 'base64url'))), key: createPrivateKey({ key: jwk as unknown as JsonWebKey, format: 'jwk' }) };
};
// Made once: a property run reuses them in new orders.
const POOL = Array.from({ length: 10 }, pair);

const check = (keyId: string, bytes: Uint8Array, sig: string) => {
  const raw = decodeKeyId(keyId);
  if (!raw) return false;
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
  return verify(null, bytes, pub, Buffer.from(sig, 'base64'));
};

function link(node: string, prev: Pair | undefined, next: Pair, kind: LinkKind, created: number, signer?: Pair): ChainLink {
  const by = signer ?? (kind === 'rotated' ? prev! : next);
  const unsigned = { keyId: next.keyId, created, kind };
  return { ...unsigned, sig: sign(null, rotationSigningBytes(node, prev?.keyId ?? '', unsigned), by.key).toString('base64') };
}

/** A well-formed record: the first key, then each next one rotated to (or, where `resets` says, reset to). */
function chainOf(node: string, keys: Pair[], resets: boolean[] = []): ChainLink[] {
  return keys.map((k, i) => link(node, keys[i - 1], k, i === 0 ? 'first' : resets[i] ? 'reset' : 'rotated', 1_000 + i));
}

const text = (links: ChainLink[]) => links.map(formatLink).join('');

describe('the rotation record', () => {
  it('a first key and its rotations: every key counts, none is a new identity', () => {
    const keys = POOL.slice(0, 4);
    const c = readChain('lead', text(chainOf('lead', keys)), check);
    expect(c.broken).toBeUndefined();
    expect(c.keys.map((k) => k.keyId)).toEqual(keys.map((k) => k.keyId));
    expect(c.keys.some((k) => k.newSince !== undefined)).toBe(false);
    expect(c.resets).toEqual([]);
  });

  it('a reset counts, and marks its key and those after it as a new identity since then', () => {
    const keys = POOL.slice(0, 4);
    const c = readChain('lead', text(chainOf('lead', keys, [false, false, true, false])), check);
    expect(c.broken).toBeUndefined();
    expect(c.keys.map((k) => k.newSince)).toEqual([undefined, undefined, 1_002, 1_002]);
    expect(c.resets).toEqual([1_002]);
  });

  it.each<[string, (keys: Pair[]) => ChainLink[], number, RegExp]>([
    ['a key appended that the key before did not sign', (k) => [...chainOf('lead', k.slice(0, 2)), link('lead', k[1], k[2]!, 'rotated', 5, k[2])], 3, /not signed by the key before it/],
    ['a second first key (a replacement that does not say reset)', (k) => [...chainOf('lead', k.slice(0, 2)), link('lead', k[1], k[2]!, 'first', 5)], 3, /a first key after the first line/],
    ['a rotation on the first line', (k) => [link('lead', undefined, k[0]!, 'rotated', 5, k[0])], 1, /a rotation with no key before it/],
    ['a key that is already in the record', (k) => [...chainOf('lead', k.slice(0, 2)), link('lead', k[1], k[0]!, 'rotated', 5)], 3, /already in the record/],
    ['a record signed for another node', (k) => chainOf('worker', k.slice(0, 2)), 1, /not signed by its own key/],
  ])('is refused from %s on', (_what, make, line, reason) => {
    const links = make(POOL.slice(0, 3));
    const c = readChain('lead', text(links), check);
    expect(c.broken).toEqual({ line, reason: expect.stringMatching(reason) });
    expect(c.keys).toHaveLength(line - 1);
  });

  it('a torn last line (an append cut short) refuses only that line', () => {
    const full = text(chainOf('lead', POOL.slice(0, 3)));
    const c = readChain('lead', full.slice(0, full.length - 30), check);
    expect(c.broken?.line).toBe(3);
    expect(c.keys.map((k) => k.keyId)).toEqual(POOL.slice(0, 2).map((k) => k.keyId));
  });

  it('any record with a broken link is refused from that link on (property)', () => {
    const mutations = ['another signer', 'another time', 'another key', 'another kind', 'another node', 'torn'] as const;
    fc.assert(
      fc.property(
        fc.shuffledSubarray(POOL.slice(0, 8), { minLength: 1, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.nat(),
        fc.constantFrom(...mutations),
        (keys, resets, at, how) => {
          const links = chainOf('lead', keys, resets);
          const k = at % links.length;
          const l = links[k]!;
          const spare = POOL.find((p) => !keys.includes(p))!;
          const prev = keys[k - 1];
          let bad: string;
          switch (how) {
            case 'another signer':
              bad = formatLink(link('lead', prev, keys[k]!, l.kind, l.created, spare));
              break;
            case 'another time':
              bad = formatLink({ ...l, created: l.created + 1 });
              break;
            case 'another key':
              bad = formatLink({ ...l, keyId: spare.keyId });
              break;
            case 'another kind':
              bad = formatLink({ ...l, kind: l.kind === 'rotated' ? 'reset' : l.kind === 'reset' ? 'rotated' : 'reset' });
              break;
            case 'another node':
              bad = formatLink(link('worker', prev, keys[k]!, l.kind, l.created));
              break;
            case 'torn':
              bad = `${formatLink(l).slice(0, 60)}\n`;
              break;
          }
          const t = text(links.slice(0, k)) + bad + text(links.slice(k + 1));
          const c = readChain('lead', t, check);
          expect(c.broken?.line).toBe(k + 1);
          expect(c.keys.map((x) => x.keyId)).toEqual(keys.slice(0, k).map((x) => x.keyId));
        },
      ),
      { numRuns: 150 },
    );
  });
});
