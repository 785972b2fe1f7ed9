// The sensor's presence (tools/sensor/heartbeat.ts) over a temporary bus, with the clock injected.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { beat, createHeartbeat, HEARTBEAT_MS, removeBeat } from '../../tools/sensor/heartbeat.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { agent } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const sensors = () => readPresence(bus.root).filter((p) => p.role === 'sensor');

describe('the sensor heartbeat', () => {
  it('beats when written, then once per HEARTBEAT_MS of ticks, and is removed at exit', () => {
    let now = 1_000_000;
    const warn: string[] = [];
    const deps = { root: bus.root, pid: 31337, now: () => now, warn: (l: string) => void warn.push(l) };
    const who = agent('00000000-0000-4000-8000-0000000000f1', join(bus.dir, 'work', 'me'));
    beat(deps, who);
    expect(sensors()).toEqual([expect.objectContaining({ id: who.id, pid: 31337, heartbeat: 1_000_000, role: 'sensor' })]);
    const hb = createHeartbeat(deps);
    now += HEARTBEAT_MS - 1;
    expect(hb.due(who)).toBe(false);
    expect(sensors()[0]?.heartbeat).toBe(1_000_000);
    now += 1;
    expect(hb.due(who)).toBe(true);
    expect(sensors()[0]?.heartbeat).toBe(now);
    expect(hb.due(who)).toBe(false);
    removeBeat(deps, who);
    expect(sensors()).toEqual([]);
    expect(warn).toEqual([]);
  });

  it('a failed write is a warning, not the end of the sensor', () => {
    const warn: string[] = [];
    const deps = { root: bus.root, pid: 31337, now: Date.now, warn: (l: string) => void warn.push(l) };
    const who = agent('00000000-0000-4000-8000-0000000000f2', join(bus.dir, 'work', 'me'));
    // The presence directory is a file: nothing can be written into it.
    mkdirSync(join(bus.root, 'state'), { recursive: true });
    rmSync(join(bus.root, 'state', 'presence'), { recursive: true, force: true });
    writeFileSync(join(bus.root, 'state', 'presence'), '');
    expect(() => beat(deps, who)).not.toThrow();
    expect(warn).toEqual([expect.stringMatching(/^attend: heartbeat failed: /)]);
  });
});
