// What wakes the outbound loop, over a real directory.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { Wake } from '../../tools/relay/wake.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

describe('Wake', () => {
  it('a wait ends at a wake, or at its timeout; a wake while busy is remembered for the next round', async () => {
    const w = new Wake();
    const t0 = Date.now();
    const waited = w.wait(10_000);
    w.wake();
    await waited;
    expect(Date.now() - t0).toBeLessThan(5_000);
    await w.wait(20);
    expect(w.pending).toBe(true);
    w.clear();
    expect(w.pending).toBe(false);
    w.wake();
    expect(w.pending).toBe(true);
  });

  it('a wait ended by a wake takes its timeout with it: it cannot end a later wait', async () => {
    const w = new Wake();
    const first = w.wait(50);
    w.wake();
    await first;
    w.clear();
    const t0 = Date.now();
    await w.wait(400);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
    expect(w.pending).toBe(true);
    w.close();
  });

  it('a new message or directory in a watched directory wakes it; a dot-file (a temporary, the index) does not', async () => {
    const dir = join(bus.root, 'signals');
    mkdirSync(dir, { recursive: true });
    const w = new Wake();
    try {
      w.watch(dir);
      w.watch(dir);
      // A dot-file alone: the wait runs to its timeout.
      let t0 = Date.now();
      let waited = w.wait(400);
      writeFileSync(join(dir, '.tmp-123'), 'x');
      await waited;
      expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
      t0 = Date.now();
      waited = w.wait(10_000);
      writeFileSync(join(dir, '0abc.signal'), 'x');
      await waited;
      expect(Date.now() - t0).toBeLessThan(5_000);
      // A directory that is not there yet is no error; a later call watches it.
      const later = join(dir, '@ops');
      w.watch(later);
      mkdirSync(later);
      // The new directory's name wakes the watch on signals/ first (at most this long).
      await w.wait(2_000);
      w.watch(later);
      t0 = Date.now();
      waited = w.wait(10_000);
      writeFileSync(join(later, '0abd.signal'), 'x');
      await waited;
      expect(Date.now() - t0).toBeLessThan(5_000);
    } finally {
      w.close();
    }
  });
});
