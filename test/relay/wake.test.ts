// What wakes the outbound loop, over a real directory.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { Wake } from '../../tools/relay/wake.js';
import { OwnWrites } from '../../tools/relay/own-writes.js';
import { ImportedSet } from '../../tools/relay/store.js';
import { appendIndexMany, dirStamp } from '../../tools/bus/store/index.js';

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

  it("a message's rename waits briefly for its index line, whose event wakes at once; the relay's own imports wake nothing", async () => {
    const dir = join(bus.root, 'signals', '_broadcast');
    mkdirSync(dir, { recursive: true });
    const imported = new ImportedSet(bus.root);
    const own = new OwnWrites(imported);
    const w = new Wake((d, name) => own.isOwn(d, name));
    try {
      expect(w.watch(dir)).toBe(true);
      // A rename alone (a file written without a line): a wake, after the grace.
      let waited = w.wait(10_000);
      writeFileSync(join(dir, '0aaa.signal'), 'x');
      await waited;
      expect(w.pending).toBe(true);
      w.clear();
      // A local writer's line: a wake at once (the wait's own timeout is far off).
      const t0 = Date.now();
      waited = w.wait(10_000);
      appendIndexMany(dir, ['0aab'], dirStamp(dir));
      await waited;
      expect(Date.now() - t0).toBeLessThan(5_000);
      w.clear();
      // An import: its id recorded, then the file, then the line, as writeImports does.
      imported.addMany([['_broadcast', '0aac']]);
      const before = dirStamp(dir);
      writeFileSync(join(dir, '0aac.signal'), 'x');
      own.indexed(dir, appendIndexMany(dir, ['0aac'], before));
      await w.wait(300);
      // Only the wait's timeout woke it: nothing armed a look meanwhile.
      w.clear();
      await new Promise((r) => setTimeout(r, 100));
      expect(w.pending).toBe(false);
      // A local line after the import's makes the index longer: that wakes at once.
      waited = w.wait(10_000);
      const t1 = Date.now();
      appendIndexMany(dir, ['0aad'], dirStamp(dir));
      await waited;
      expect(Date.now() - t1).toBeLessThan(5_000);
    } finally {
      w.close();
      imported.close();
    }
  });

  it('OwnWrites: an index another writer appended to meanwhile, or replaced, is not the relay\'s own', () => {
    const dir = join(bus.root, 'signals', '_broadcast');
    mkdirSync(dir, { recursive: true });
    const own = new OwnWrites({ has: (d, id) => d === '_broadcast' && id === '0abc' });
    expect(own.isOwn(dir, '0abc.signal')).toBe(true);
    expect(own.isOwn(dir, '0abc.sig')).toBe(true);
    expect(own.isOwn(dir, '0abd.signal')).toBe(false);
    expect(own.isOwn(dir, '.index')).toBe(false);
    own.indexed(dir, appendIndexMany(dir, ['0abc'], dirStamp(dir)));
    expect(own.isOwn(dir, '.index')).toBe(true);
    appendIndexMany(dir, ['0abd'], dirStamp(dir));
    expect(own.isOwn(dir, '.index')).toBe(false);
    own.indexed(dir, appendIndexMany(dir, ['0abe'], dirStamp(dir)));
    expect(own.isOwn(dir, '.index')).toBe(true);
    // Replaced (a cleanup rewrites it) with the same size: another file.
    const text = readFileSync(join(dir, '.index'));
    rmSync(join(dir, '.index'));
    writeFileSync(join(dir, 'x'), 'keep the inode taken');
    writeFileSync(join(dir, '.index'), text);
    expect(own.isOwn(dir, '.index')).toBe(false);
    own.indexed(dir, null);
    expect(own.isOwn(dir, '.index')).toBe(false);
  });
});
