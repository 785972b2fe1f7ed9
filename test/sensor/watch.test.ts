// What wakes the sensor (tools/sensor/watch.ts) over a temporary bus, in-process: an indexed
// write wakes it, a bare rename only reports the rename, and a join re-aims the watch.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join as pjoin } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Identity } from '../../tools/identity/resolve.js';
import { createSensorWatch, type SensorWatch } from '../../tools/sensor/watch.js';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { agent, ids, join, put } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
const open: SensorWatch[] = [];
afterEach(() => {
  for (const w of open.splice(0)) w.close();
});

function watching(who: Identity, poll = false) {
  const events = { wakes: 0, renames: 0, warnings: [] as string[] };
  let stopping = false;
  const w = createSensorWatch({
    root: bus.root,
    pid: process.pid,
    poll,
    pollIntervalMs: 100,
    who: () => who,
    stopping: () => stopping,
    wake: () => void events.wakes++,
    renamed: () => void events.renames++,
    warn: (l) => void events.warnings.push(l),
  });
  open.push(w);
  return { w, events, stop: () => (stopping = true) };
}

const me = () => agent('00000000-0000-4000-8000-0000000000c1', pjoin(bus.dir, 'work', 'me'));

describe('the sensor watch', () => {
  for (const poll of [false, true]) {
    it(`an indexed write wakes it${poll ? ' (polling)' : ''}`, async () => {
      const { w, events } = watching(me(), poll);
      await w.start();
      expect(events.warnings).toEqual([]);
      const before = events.wakes;
      put(bus.root, ids(), { scope: { kind: 'open' }, to: '*', body: 'hello' });
      await waitFor(() => events.wakes > before, { what: 'a wake' });
    });
  }

  it('a message renamed in without an index line reports the rename and wakes nothing', async () => {
    const { w, events } = watching(me());
    await w.start();
    const dir = pjoin(bus.root, 'signals', '_broadcast');
    mkdirSync(dir, { recursive: true });
    const id = ids()();
    writeFileSync(pjoin(dir, `${id}.signal`), 'external:tool@pts-9|p|/p|from_kind:human|from_id:tool|to:*|by hand\n');
    await waitFor(() => events.renames > 0, { what: 'the rename' });
    expect(events.wakes).toBe(0);
  });

  it('a join re-aims the watch at the channel and says so', async () => {
    const who = me();
    const { w, events } = watching(who);
    await w.start();
    join(bus.root, 'ops', who.id);
    await waitFor(() => events.warnings.some((l) => l.startsWith('attend: now watching') && l.includes('#ops')), { what: 'the new scopes' });
    const before = events.wakes;
    put(bus.root, ids(), { scope: { kind: 'channel', name: 'ops' }, to: '#ops', body: 'on ops' });
    await waitFor(() => events.wakes > before, { what: 'a wake from #ops' });
  });

  it('the tick notices a membership change no watch reported', async () => {
    const who = me();
    const { w, events } = watching(who, true);
    // Not started: no watch, so only the tick's look at the channel store can see the join.
    join(bus.root, 'ops', who.id);
    expect(events.warnings).toEqual([]);
    w.tick();
    await waitFor(() => events.warnings.some((l) => l.includes('#ops')), { what: 'the membership change' });
    expect(events.wakes).toBeGreaterThan(0);
  });

  it('once stopping, it opens no watch', async () => {
    const { w, events, stop } = watching(me(), true);
    stop();
    await w.start();
    put(bus.root, ids(), { scope: { kind: 'open' }, to: '*', body: 'unheard' });
    await new Promise((r) => setTimeout(r, 300));
    expect(events.wakes).toBe(0);
  });
});
