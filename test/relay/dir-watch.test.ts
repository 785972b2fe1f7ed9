// The directory watch (tools/bus/store/dir-watch.ts, the relay's and wake.ts's) over real directories, and when the
// roster is looked at (tools/relay/presence.ts nextLookAt).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { DirWatch } from '../../tools/bus/store/dir-watch.js';
import { nextLookAt } from '../../tools/relay/presence.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

describe('DirWatch', () => {
  it('hears an entry of a directory that exists; one two levels down that does not yet, once it is made, and then its entries', async () => {
    const here = join(bus.dir, 'here');
    mkdirSync(here, { recursive: true });
    const heard: (string | null)[] = [];
    const w = new DirWatch(here, (n) => heard.push(n));
    const deep = join(bus.dir, 'a', 'b');
    const deepHeard: (string | null)[] = [];
    const d = new DirWatch(deep, (n) => deepHeard.push(n));
    try {
      expect(w.watching).toBe(true);
      // Watching the ancestor that exists (bus.dir) for the step towards a/b.
      expect(d.watched).toBe(bus.dir);
      writeFileSync(join(here, 'x.json'), '{}');
      await waitFor(() => heard.includes('x.json'), { what: 'x.json heard' });
      writeFileSync(join(bus.dir, 'unrelated'), '');
      mkdirSync(deep, { recursive: true });
      d.ensure(); // the poll's net: b may have been made before a's watch began
      await waitFor(() => deepHeard.includes(null), { what: 'a/b made' });
      expect(d.watched).toBe(deep);
      writeFileSync(join(deep, 'y.pub'), '');
      await waitFor(() => deepHeard.includes('y.pub'), { what: 'y.pub heard' });
      expect(deepHeard.filter((n) => n !== null && n !== 'y.pub')).toEqual([]);
    } finally {
      w.close();
      d.close();
    }
  });

  it('a watched directory that is removed is watched for again from its parent: made again, it is heard', async () => {
    const dir = join(bus.dir, 'gone');
    mkdirSync(dir);
    const heard: (string | null)[] = [];
    const w = new DirWatch(dir, (n) => heard.push(n));
    try {
      expect(w.watched).toBe(dir);
      rmSync(dir, { recursive: true });
      await waitFor(() => w.watched === bus.dir, { what: 'the parent watched' });
      mkdirSync(dir);
      await waitFor(() => heard.includes(null), { what: 'gone made again' });
      writeFileSync(join(dir, 'z.json'), '');
      await waitFor(() => heard.includes('z.json'), { what: 'z.json heard' });
    } finally {
      w.close();
    }
    expect(w.watching).toBe(false);
  });
});

describe('nextLookAt', () => {
  const beatMs = 15_000;
  const at = (o: Partial<Parameters<typeof nextLookAt>[0]>) => nextLookAt({ lastLook: 0, lastEventLook: -Infinity, lastPut: 0, beatMs, event: false, ...o });
  it('the slow look every 10 s, the beat at half the TTL, an event at once but never two within 2 s, a failed beat again after 2 s', () => {
    expect(at({})).toBe(10_000);
    expect(at({ lastLook: 10_000 })).toBe(15_000);
    // An event after a quiet spell: at once, even just after a slow look.
    expect(at({ lastLook: 9_000, event: true })).toBe(9_000);
    expect(at({ lastLook: 9_000, lastEventLook: 8_500, event: true })).toBe(10_500);
    expect(at({ lastLook: 0, lastEventLook: 0, event: true })).toBe(2_000);
    // The beat due but not put (the hub away): again 2 s after the look that failed.
    expect(at({ lastLook: 20_000, lastPut: 0 })).toBe(22_000);
  });
});
