import { describe, expect, it } from 'vitest';
import { createIdFactory, idTime, isMessageId } from '../../tools/wire/ids.js';

const ID_SHAPE = /^[0-9a-z]{12}-[0-9a-z]{8}$/;

describe('message ids', () => {
  it('have a fixed shape in the message-id class and carry their creation time', () => {
    const next = createIdFactory({ now: () => 1_764_000_000_123, pid: 4242, random: () => 0.5 });
    const id = next();
    expect(id).toMatch(ID_SHAPE);
    expect(isMessageId(id)).toBe(true);
    expect(idTime(id)).toBe(1_764_000_000_123);
  });

  it('increase within one millisecond, and past the sequence space of one millisecond', () => {
    const next = createIdFactory({ now: () => 1_000_000, pid: 1, random: Math.random });
    let prev = '';
    for (let i = 0; i < 36 ** 3 + 50; i++) {
      const id = next();
      expect(id > prev).toBe(true);
      prev = id;
    }
    // The overflow borrowed the next millisecond.
    expect(idTime(prev)).toBe(1_000_001);
  });

  it('keep increasing when the clock steps backwards', () => {
    let t = 5_000_000;
    const next = createIdFactory({ now: () => t, pid: 7, random: Math.random });
    const a = next();
    t -= 1000;
    const b = next();
    expect(b > a).toBe(true);
  });

  it('sort by creation time across processes (time is the prefix)', () => {
    const early = createIdFactory({ now: () => 1_000, pid: 999_999, random: () => 0.99 })();
    const late = createIdFactory({ now: () => 1_001, pid: 1, random: () => 0 })();
    expect(early < late).toBe(true);
  });

  it('two processes in the same millisecond differ by pid and randomness', () => {
    const a = createIdFactory({ now: () => 1, pid: 100, random: () => 0.1 })();
    const b = createIdFactory({ now: () => 1, pid: 101, random: () => 0.1 })();
    const c = createIdFactory({ now: () => 1, pid: 100, random: () => 0.2 })();
    expect(new Set([a, b, c]).size).toBe(3);
  });

  it('isMessageId refuses paths, separators and empties; idTime ignores foreign ids', () => {
    for (const bad of ['', '..', 'a/b', 'a.b', 'a b', 'a|b', 'x'.repeat(129), '../../etc/passwd', 'id\n']) expect(isMessageId(bad), bad).toBe(false);
    expect(isMessageId('legacy_ID-1')).toBe(true);
    expect(idTime('legacy_ID-1')).toBeNull();
  });
});
