// The batch writer the relay imports with (tools/bus/store/atomic.ts writeFilesAtomic), its index
// lines (appendIndexMany) and the outbound side's tail reader (readIndexTail), on a real
// temporary bus.
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFilesAtomic } from '../../tools/bus/store/atomic.js';
import { INDEX_NAME, appendIndexMany, dirStamp, readIndex, readIndexTail, SETTLE_MS } from '../../tools/bus/store/dir-index.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

describe('writeFilesAtomic', () => {
  it('writes every file with its bytes and time, leaving no temporaries', async () => {
    const dir = join(bus.root, 'signals', '_broadcast');
    const files = Array.from({ length: 300 }, (_, i) => ({ path: join(dir, `m${i}.signal`), data: `line ${i}\n`, mtimeMs: 1_700_000_000_000 + i }));
    await writeFilesAtomic(files);
    const names = readdirSync(dir);
    expect(names.filter((n) => n.startsWith('.'))).toEqual([]);
    expect(names).toHaveLength(300);
    expect(readFileSync(join(dir, 'm299.signal'), 'utf8')).toBe('line 299\n');
    expect(Math.round(statSync(join(dir, 'm7.signal')).mtimeMs)).toBe(1_700_000_000_007);
  });

  it('runs afterRename once every file is in place, before it resolves', async () => {
    const dir = join(bus.root, 'signals', '_broadcast');
    const files = Array.from({ length: 3 }, (_, i) => ({ path: join(dir, `m${i}.signal`), data: `line ${i}\n` }));
    let seen: string[] | null = null;
    const done = writeFilesAtomic(files, { afterRename: () => (seen = readdirSync(dir).sort()) });
    await done;
    expect(seen).toEqual(['m0.signal', 'm1.signal', 'm2.signal']);
  });

  it('renames nothing and leaves no temporaries when one file cannot be written', async () => {
    if (process.getuid?.() === 0) return; // root writes anywhere: nothing to refuse
    const ok = join(bus.root, 'signals', 'a');
    const shut = join(bus.root, 'signals', 'b');
    mkdirSync(ok, { recursive: true });
    mkdirSync(shut, { recursive: true });
    chmodSync(shut, 0o500);
    try {
      await expect(writeFilesAtomic([{ path: join(ok, 'x.signal'), data: 'x\n' }, { path: join(shut, 'y.signal'), data: 'y\n' }])).rejects.toThrow(/cannot write .*y\.signal/);
      expect(readdirSync(ok)).toEqual([]);
      expect(readdirSync(shut)).toEqual([]);
    } finally {
      chmodSync(shut, 0o700);
    }
  });
});

describe('writeFilesAtomic, a batch of one or two (made and synced on the calling thread) and a larger one', () => {
  it.each([1, 2, 3])('%i file(s) into a directory not made yet: written whole, with their time, the directory made', async (n) => {
    const dir = join(bus.root, 'signals', `new-${n}`, 'deeper');
    const files = Array.from({ length: n }, (_, i) => ({ path: join(dir, `m${i}.signal`), data: `line ${i}\n`, mtimeMs: 1_700_000_000_000 + i }));
    let seen: string[] | null = null;
    await writeFilesAtomic(files, { afterRename: () => (seen = readdirSync(dir).sort()) });
    expect(seen).toEqual(files.map((_, i) => `m${i}.signal`));
    expect(readdirSync(dir).sort()).toEqual(files.map((_, i) => `m${i}.signal`));
    expect(readFileSync(join(dir, `m${n - 1}.signal`), 'utf8')).toBe(`line ${n - 1}\n`);
    expect(Math.round(statSync(join(dir, 'm0.signal')).mtimeMs)).toBe(1_700_000_000_000);
  });

  it.each([1, 2, 3])('%i file(s), one of them under a path that is a file: rejects naming it, renames nothing, leaves no temporaries', async (n) => {
    const ok = join(bus.root, 'signals', `ok-${n}`);
    mkdirSync(ok, { recursive: true });
    const notDir = join(bus.root, 'signals', `plain-${n}`);
    writeFileSync(notDir, 'a file, not a directory\n');
    const files = [...Array.from({ length: n - 1 }, (_, i) => ({ path: join(ok, `m${i}.signal`), data: 'x\n' })), { path: join(notDir, 'y.signal'), data: 'y\n' }];
    await expect(writeFilesAtomic(files)).rejects.toThrow(/cannot write .*y\.signal/);
    expect(readdirSync(ok)).toEqual([]);
    expect(readFileSync(notDir, 'utf8')).toBe('a file, not a directory\n');
  });
});

describe('index lines for a batch, and the tail', () => {
  it('a batch appended at once keeps the chain explained; the tail reads what was appended', () => {
    const dir = join(bus.root, 'signals', '_broadcast');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, INDEX_NAME), '');
    const first = readIndex(dir, undefined, Date.now()).state!;
    const start = readIndexTail(dir, undefined)!;
    expect(start.reset).toBe(true);
    const before = dirStamp(dir);
    for (const id of ['0mx4aaaaa000-aaaaaaaa', '0mx4aaaaa001-aaaaaaaa']) writeFileSync(join(dir, `${id}.signal`), 'x|p|/c|to:*|hi\n');
    appendIndexMany(dir, ['0mx4aaaaa000-aaaaaaaa', '0mx4aaaaa001-aaaaaaaa'], before);
    const r = readIndex(dir, first, Date.now());
    expect(r.ok && r.ids).toEqual(['0mx4aaaaa000-aaaaaaaa', '0mx4aaaaa001-aaaaaaaa']);
    const t = readIndexTail(dir, start.tail)!;
    expect(t).toMatchObject({ ids: ['0mx4aaaaa000-aaaaaaaa', '0mx4aaaaa001-aaaaaaaa'], reset: false });
    // A write without a line breaks the chain, but the tail still gives what was indexed.
    const next = dirStamp(dir);
    writeFileSync(join(dir, '0mx4aaaaa002-aaaaaaaa.signal'), 'x|p|/c|to:*|indexed\n');
    appendIndexMany(dir, ['0mx4aaaaa002-aaaaaaaa'], next);
    writeFileSync(join(dir, 'stray.signal'), 'x|p|/c|to:*|hand-made\n');
    expect(readIndex(dir, r.ok ? r.state : first, Date.now() + SETTLE_MS)).toMatchObject({ ok: false, why: 'unexplained change' });
    expect(readIndexTail(dir, t.tail)!.ids).toEqual(['0mx4aaaaa002-aaaaaaaa']);
  });
});
