// Where the relay's outbound side looks (tools/relay/outbound.ts Outbox.scan, wake.ts): a
// message costs it its own directory's look, not one per tray and channel on the bus; a
// failed publish, a rewind and the poll still look where they must. Over a real bus.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { Outbox } from '../../tools/relay/outbound.js';
import { ImportedSet } from '../../tools/relay/store.js';
import { Wake } from '../../tools/relay/wake.js';
import { writeLocal } from '../helpers/write-local.js';
import { appendIndexMany, dirStamp } from '../../tools/bus/store/index.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { createIdFactory } from '../../tools/wire/ids.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const chan = (name: string): Scope => ({ kind: 'channel', name });

function outbox(): Outbox {
  return new Outbox(bus.root, 'alpha', new ImportedSet(bus.root), { since: Date.now() - 60_000, dirs: {} }, () => undefined);
}

const found = (o: Outbox, only?: ReadonlySet<string>) => o.scan(Date.now(), only).map((p) => `${p.dir} ${p.id}`);

describe('Outbox.scan', () => {
  it('looks only where it is told once it has looked everywhere; what it was not told of waits for a look everywhere', () => {
    const a1 = writeLocal(bus.root, 'a1', chan('a'));
    const b1 = writeLocal(bus.root, 'b1', chan('b'));
    const o = outbox();
    // The first scan looks everywhere, whatever it is told.
    const first = o.scan(Date.now(), new Set(['@b']));
    expect(first.map((p) => `${p.dir} ${p.id}`)).toEqual([`@a ${a1}`, `@b ${b1}`]);
    expect(o.dirNames).toEqual(['@a', '@b']);
    for (const p of first) o.done(p);
    const a2 = writeLocal(bus.root, 'a2', chan('a'));
    const b2 = writeLocal(bus.root, 'b2', chan('b'));
    const c1 = writeLocal(bus.root, 'c1', chan('c'));
    // Told of @b: only @b (a directory it was not told of is not read).
    const onlyB = o.scan(Date.now(), new Set(['@b']));
    expect(onlyB.map((p) => `${p.dir} ${p.id}`)).toEqual([`@b ${b2}`]);
    o.done(onlyB[0]!);
    expect(o.dirNames).toEqual(['@a', '@b']);
    // Everywhere: the rest, the new directory among them.
    expect(found(o)).toEqual([`@a ${a2}`, `@c ${c1}`]);
    expect(o.dirNames).toEqual(['@a', '@b', '@c']);
  });

  it('a failed publish is looked at again by the next scan, wherever it is told to look; a rewind looks everywhere', () => {
    const a1 = writeLocal(bus.root, 'a1', chan('a'));
    const b1 = writeLocal(bus.root, 'b1', chan('b'));
    const o = outbox();
    const first = o.scan(Date.now());
    const inA = first.find((p) => p.dir === '@a')!;
    o.done(first.find((p) => p.dir === '@b')!);
    o.retry(inA);
    const again = o.scan(Date.now(), new Set(['@b']));
    expect(again.map((p) => `${p.dir} ${p.id}`)).toEqual([`@a ${a1}`]);
    // Retried once and done: nothing left to look at again.
    o.done(again[0]!);
    expect(found(o, new Set(['@b']))).toEqual([]);
    // The hub lost its store: everything since is offered again, from every directory.
    o.rewind(Date.now() - 60_000);
    expect(found(o, new Set(['@b']))).toEqual([`@a ${a1}`, `@b ${b1}`]);
  });
});

/**
 * The rounds' looks until one is at `dir` (a write's second event may wake a round of its
 * own first): their union. None may be everywhere, and the look at `dir` comes by its grace,
 * long before the waits' timeout.
 */
async function looksUntil(w: Wake, dir: string, pending: Promise<void>): Promise<Set<string>> {
  const union = new Set<string>();
  const t0 = Date.now();
  for (let waited = pending; ; waited = w.wait(10_000)) {
    await waited;
    const look = w.clear();
    expect(look).not.toBe('all');
    for (const d of look as ReadonlySet<string>) union.add(d);
    if (union.has(dir)) return union;
    expect(Date.now() - t0).toBeLessThan(5_000);
  }
}

describe('Outbox.recheckAt', () => {
  it('a directory whose change the index leaves unexplained is due for a look, until it is gone', async () => {
    writeLocal(bus.root, 'a1', chan('a'));
    writeLocal(bus.root, 'b1', chan('b'));
    const o = outbox();
    for (const p of o.scan(Date.now())) o.done(p);
    expect(o.recheckAt).toBe(Number.POSITIVE_INFINITY);
    // A file put in @a by hand: no index line explains it.
    const id = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random })();
    writeFileSync(join(bus.root, 'signals', '@a', `${id}.signal`), 'external:ann@pts/1|work|/work|to:*|by hand\n');
    // Once the change is older than a line on its way would be (SETTLE_MS), looks at @a
    // alone say when it is due for a full listing (its file is offered then, not before).
    const t0 = Date.now();
    await waitFor(() => found(o, new Set(['@a'])).length === 0 && o.recheckAt < Number.POSITIVE_INFINITY, { what: '@a due for a listing' });
    expect(o.recheckAt).toBeGreaterThanOrEqual(t0);
    // A look at @b alone keeps @a's due time.
    found(o, new Set(['@b']));
    expect(o.recheckAt).toBeLessThan(Number.POSITIVE_INFINITY);
    // @a is removed (a dissolved channel): the next look everywhere drops it, so the loop
    // does not wake for it again and again.
    rmSync(join(bus.root, 'signals', '@a'), { recursive: true });
    found(o);
    expect(o.recheckAt).toBe(Number.POSITIVE_INFINITY);
  });
});

/** signals/ with two channel directories in it, @a and @b: their paths. */
function twoDirs(): { top: string; a: string; b: string } {
  const top = join(bus.root, 'signals');
  const a = join(top, '@a');
  const b = join(top, '@b');
  mkdirSync(a, { recursive: true });
  mkdirSync(b, { recursive: true });
  return { top, a, b };
}

describe('Wake: where a round looks', () => {
  it('the first round, the poll and a plain wake look everywhere; a directory\'s own events look there', async () => {
    const { top, a, b } = twoDirs();
    const w = new Wake();
    try {
      expect(w.clear()).toBe('all');
      expect(w.top(top)).toBe(true);
      expect(w.watch(a)).toBe(true);
      expect(w.watch(b)).toBe(true);
      // A directory just watched is looked at once more (what came before its watch).
      expect(w.clear()).toEqual(new Set([a, b]));
      // A line in @a's index: a look at @a alone (an event of the same write may come a
      // moment later, and ask for @a again).
      let waited = w.wait(10_000);
      appendIndexMany(a, ['0aaa'], dirStamp(a));
      await waited;
      expect(w.clear()).toEqual(new Set([a]));
      // A rename in @b without its line: @b, after the grace.
      waited = w.wait(10_000);
      writeFileSync(join(b, '0aab.signal'), 'x');
      expect([...(await looksUntil(w, b, waited))].filter((d) => d !== a)).toEqual([b]);
      // A new directory (an event in signals/ itself): everywhere.
      waited = w.wait(10_000);
      mkdirSync(join(top, '@c'));
      await waited;
      expect(w.clear()).toBe('all');
      // The poll's timeout, and a wake from elsewhere (a reconnect): everywhere.
      await w.wait(20);
      expect(w.clear()).toBe('all');
      w.wake(a);
      w.wake();
      expect(w.clear()).toBe('all');
    } finally {
      w.close();
    }
  });

  it('a rename in one directory and a line in another: both are looked at, and nothing else', async () => {
    const { top, a, b } = twoDirs();
    const w = new Wake();
    try {
      w.top(top);
      w.watch(a);
      w.watch(b);
      w.clear();
      const waited = w.wait(10_000);
      writeFileSync(join(b, '0aab.signal'), 'x');
      appendIndexMany(a, ['0aaa'], dirStamp(a));
      expect([...(await looksUntil(w, b, waited))].sort()).toEqual([a, b]);
    } finally {
      w.close();
    }
  });
});
