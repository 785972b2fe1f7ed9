// Canonical signing bytes, key ids and sidecars (spec §7). The vectors in vectors/sign.json
// were made once by an independent implementation (key ids by @nats-io/nkeys 2.0.3's Codec,
// signatures by node:crypto) and are pinned: a change to the encoding breaks this test.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Envelope, WIDE_CLASS } from '../../tools/wire/envelope.js';
import {
  base32Decode,
  base32Encode,
  decodeKeyId,
  destinationOf,
  encodeKeyId,
  formatSidecar,
  lengthPrefixed,
  messageSigningBytes,
  parseSidecar,
  sanitizeHost,
  webhookSigningBytes,
} from '../../tools/wire/sign.js';

interface Vectors {
  domain: string;
  keys: { seedHex: string; publicKeyHex: string; keyId: string }[];
  messages: { seedHex: string; id: string; dest: string; host: string; envelope: Envelope; signingBytesHex: string; signature: string }[];
}
const vectors = JSON.parse(readFileSync(new URL('./vectors/sign.json', import.meta.url), 'utf8')) as Vectors;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const privateFromSeed = (seedHex: string) =>
  createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seedHex, 'hex')]), format: 'der', type: 'pkcs8' });

describe('key ids (NATS nkey text form)', () => {
  it.each(vectors.keys)('$keyId', (k) => {
    const pub = Uint8Array.from(Buffer.from(k.publicKeyHex, 'hex'));
    expect(encodeKeyId(pub)).toBe(k.keyId);
    expect(hex(decodeKeyId(k.keyId) as Uint8Array)).toBe(k.publicKeyHex);
    expect(k.keyId).toHaveLength(56);
    expect(WIDE_CLASS.test(k.keyId)).toBe(true);
    // The vector's public key is the one node:crypto derives from the seed.
    const derived = createPublicKey(privateFromSeed(k.seedHex)).export({ format: 'der', type: 'spki' }).subarray(-32);
    expect(hex(derived)).toBe(k.publicKeyHex);
  });

  it('rejects a wrong length, a wrong prefix, a flipped character and a non-base32 character', () => {
    const good = vectors.keys[0]!.keyId;
    expect(decodeKeyId(good.slice(0, 55))).toBeNull();
    expect(decodeKeyId(`N${good.slice(1)}`)).toBeNull();
    const flipped = good.slice(0, 20) + (good[20] === 'A' ? 'B' : 'A') + good.slice(21);
    expect(decodeKeyId(flipped)).toBeNull();
    expect(decodeKeyId(`${good.slice(0, 55)}1`)).toBeNull();
  });

  it('round-trips every 32-byte key and detects any single changed character', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.nat(55), (key, at) => {
        const id = encodeKeyId(key);
        expect(id).toHaveLength(56);
        expect(WIDE_CLASS.test(id)).toBe(true);
        expect(hex(decodeKeyId(id) as Uint8Array)).toBe(hex(key));
        const ch = id[at] === 'Q' ? 'R' : 'Q';
        const changed = id.slice(0, at) + ch + id.slice(at + 1);
        expect(decodeKeyId(changed)).toBeNull();
      }),
    );
  });

  it('base32 round-trips any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
      expect(hex(base32Decode(base32Encode(b)) as Uint8Array)).toBe(hex(b));
    }));
  });
});

describe('canonical message bytes', () => {
  it.each(vectors.messages)('$id is pinned and its signature verifies', (v) => {
    const bytes = messageSigningBytes({ id: v.id, dest: v.dest, host: v.host, envelope: v.envelope });
    expect(hex(bytes)).toBe(v.signingBytesHex);
    // Ed25519 is deterministic: the same key over the same bytes gives the pinned signature.
    const priv = privateFromSeed(v.seedHex);
    expect(sign(null, bytes, priv).toString('base64')).toBe(v.signature);
    expect(verify(null, bytes, createPublicKey(priv), Buffer.from(v.signature, 'base64'))).toBe(true);
  });

  it('starts with the length-prefixed domain tag', () => {
    const b = messageSigningBytes({ id: 'x', dest: '*', host: 'h', envelope: { from: 'f', project: 'p', cwd: 'c', body: 'b' } });
    expect(Buffer.from(b.subarray(0, 4)).readUInt32BE(0)).toBe(vectors.domain.length);
    expect(Buffer.from(b.subarray(4, 4 + vectors.domain.length)).toString()).toBe('attend/message/v1');
  });

  const env = fc.record({
    from: fc.string({ minLength: 1 }),
    project: fc.string(),
    cwd: fc.string(),
    fromKind: fc.constantFrom('agent' as const, 'human' as const),
    fromId: fc.string(),
    onBehalfOf: fc.string(),
    to: fc.string(),
    re: fc.string(),
    body: fc.string(),
  }, { requiredKeys: ['from', 'project', 'cwd', 'body'] });
  const signed = fc.record({ id: fc.string(), dest: fc.string(), host: fc.string(), envelope: env });

  it('is injective: two different field sets never give the same bytes (length prefixes, no separator games)', () => {
    fc.assert(
      fc.property(signed, signed, (a, b) => {
        const same = hex(messageSigningBytes(a)) === hex(messageSigningBytes(b));
        const norm = (s: typeof a) => JSON.stringify([s.id, s.dest, s.host, s.envelope.from, s.envelope.project, s.envelope.cwd, s.envelope.fromKind ?? '', s.envelope.fromId ?? '', s.envelope.onBehalfOf ?? '', s.envelope.to ?? '', s.envelope.re ?? '', s.envelope.body]);
        expect(same).toBe(norm(a) === norm(b));
      }),
    );
  });

  it('moving text between adjacent fields changes the bytes', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), (a, b) => {
        const x = lengthPrefixed('d', [a, b]);
        const y = lengthPrefixed('d', [a.slice(0, -1), a.slice(-1) + b]);
        expect(hex(x)).not.toBe(hex(y));
      }),
    );
  });

  it('binds the destination directory', () => {
    expect(destinationOf({ kind: 'open' })).toBe('*');
    expect(destinationOf({ kind: 'channel', name: 'ops' })).toBe('#ops');
    expect(destinationOf({ kind: 'tray', key: '-p-1' })).toBe('tray:-p-1');
  });
});

describe('sidecar', () => {
  const good = { keyId: vectors.keys[1]!.keyId, host: 'devbox', sig: vectors.messages[0]!.signature };

  it('round-trips', () => {
    expect(parseSidecar(formatSidecar(good))).toEqual(good);
  });

  it.each([
    ['empty', '', /not an attend-sig/],
    ['wrong version', formatSidecar(good).replace('v1', 'v2'), /not an attend-sig/],
    ['truncated (no sig line)', formatSidecar(good).split('\n').slice(0, 3).join('\n'), /truncated/],
    ['truncated signature', formatSidecar(good).replace(good.sig, good.sig.slice(0, 40)), /64 bytes/],
    ['cut mid-file', formatSidecar(good).slice(0, 70), /./],
    ['bad key id', formatSidecar(good).replace(good.keyId, good.keyId.slice(0, -1) + 'A'), /not a valid public key/],
    ['repeated field', formatSidecar(good) + 'key x\n', /repeated/],
    ['host with a space', formatSidecar(good).replace('host devbox', 'host dev box'), /host/],
  ])('refuses %s', (_name, text, reason) => {
    const r = parseSidecar(text);
    expect(typeof r).toBe('string');
    expect(r).toMatch(reason);
  });

  it('sanitizes host names into the signed class', () => {
    expect(sanitizeHost('my host|x')).toBe('my_host_x');
    expect(sanitizeHost('')).toBe('localhost');
  });
});

describe('webhook signing bytes (the adapters\' Ed25519 header)', () => {
  it('are the plain text a receiver rebuilds, and never a length-prefixed form (first byte 0)', () => {
    expect(Buffer.from(webhookSigningBytes('1700000000', '{"a":1}')).toString('utf8')).toBe('attend/webhook/v1\n1700000000\n{"a":1}');
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }), fc.string({ maxLength: 12 }), fc.string({ maxLength: 40 }), (domain, fields, ts, body) => {
        expect(webhookSigningBytes(ts, body)[0]).not.toBe(lengthPrefixed(domain, fields)[0]);
      }),
    );
  });
});
