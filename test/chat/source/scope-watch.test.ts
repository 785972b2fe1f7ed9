// The scope watch (tools/chat/source/scope-watch.ts) on a real temporary bus: the periodic
// rescan on stepped timers, the watch events on real directories, and a bus directory that
// vanishes and comes back.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scopeDir, signalsDir } from '../../../tools/bus/store/index.js';
import { createScopeWatch, RESCAN_MS } from '../../../tools/chat/source/scope-watch.js';
import { type TempBus, useTempBus, waitFor } from '../../helpers/temp-bus.js';
import { manualTimers } from '../../helpers/timers.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function watcher() {
  const timers = manualTimers();
  const log = { scans: [] as string[], files: [] as string[], statuses: [] as (string | null)[], channels: [] as string[][] };
  const w = createScopeWatch({
    root: bus.root,
    timers,
    scan: (dir) => log.scans.push(dir),
    file: (dir, name) => log.files.push(`${dir}/${name}`),
    status: (t) => log.statuses.push(t),
    channels: (names) => log.channels.push(names),
  });
  return { timers, log, w };
}

const mkScope = (scope: Parameters<typeof scopeDir>[1]) => mkdirSync(scopeDir(bus.root, scope), { recursive: true, mode: 0o700 });

describe('chat scope watch', () => {
  it('rescans every scope directory at start and every RESCAN_MS, naming the channels each time', () => {
    mkScope({ kind: 'open' });
    mkScope({ kind: 'channel', name: 'ops' });
    // Neither is a scope directory (a tray is any other name).
    mkdirSync(join(signalsDir(bus.root), '.hidden'), { recursive: true });
    mkdirSync(join(signalsDir(bus.root), '_other'), { recursive: true });
    const { timers, log, w } = watcher();
    try {
      w.start();
      expect(log.scans.sort()).toEqual(['@ops', '_broadcast']);
      expect(log.channels).toEqual([['ops']]);
      mkScope({ kind: 'channel', name: 'dev' });
      timers.advance(RESCAN_MS);
      expect(log.channels.at(-1)?.sort()).toEqual(['dev', 'ops']);
      expect(log.scans.filter((d) => d === '@dev')).toHaveLength(1);
      expect(log.statuses).toEqual([]);
    } finally {
      w.stop();
    }
    expect(timers.pending()).toBe(0);
  });

  it('says when the bus directory is gone, once, and clears it when it is back', () => {
    mkScope({ kind: 'open' });
    const { timers, log, w } = watcher();
    try {
      w.start();
      rmSync(signalsDir(bus.root), { recursive: true, force: true });
      timers.advance(RESCAN_MS * 3);
      expect(log.statuses).toEqual([`the bus directory ${signalsDir(bus.root)} is gone; waiting for it to come back`]);
      const scans = log.scans.length;
      mkScope({ kind: 'open' });
      timers.advance(RESCAN_MS);
      expect(log.statuses.at(-1)).toBeNull();
      expect(log.scans.slice(scans)).toEqual(['_broadcast']);
    } finally {
      w.stop();
    }
  });

  it('passes on a file written in a scope directory and scans a directory made after start', async () => {
    mkScope({ kind: 'open' });
    const { log, w } = watcher();
    try {
      w.start();
      writeFileSync(join(scopeDir(bus.root, { kind: 'open' }), '0zzzzzzzzzzz-aaaa.signal'), 'x\n');
      await waitFor(() => log.files.includes('_broadcast/0zzzzzzzzzzz-aaaa.signal'), { what: 'the file event' });
      mkScope({ kind: 'channel', name: 'ops' });
      // Seen by the watch on signals/, well before a rescan (the timers never move here).
      await waitFor(() => log.scans.includes('@ops') && log.channels.some((c) => c.includes('ops')), { what: 'the new channel directory' });
    } finally {
      w.stop();
    }
  });
});
