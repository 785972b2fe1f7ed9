// The chat's own presence (tools/chat/source/heartbeat.ts) on a real temporary bus, on
// stepped timers: written at start and every HEARTBEAT_MS, removed once at stop.

import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readPresence } from '../../../tools/bus/presence/index.js';
import { createChatPresence, HEARTBEAT_MS } from '../../../tools/chat/source/heartbeat.js';
import { type TempBus, useTempBus } from '../../helpers/temp-bus.js';
import { manualTimers } from '../../helpers/timers.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

describe('chat presence heartbeat', () => {
  it('beats at start and every HEARTBEAT_MS as the human in chat, and is removed at stop', () => {
    const timers = manualTimers();
    let now = 1_000_000;
    const p = createChatPresence({ root: bus.root, me: { id: 'tester', origin: bus.home }, pid: process.pid, now: () => now, timers });
    const mine = () => readPresence(bus.root).filter((r) => r.id === 'tester');
    p.start();
    expect(mine()).toEqual([expect.objectContaining({ kind: 'human', role: 'chat', origin: bus.home, pid: process.pid, heartbeat: 1_000_000 })]);
    now += HEARTBEAT_MS - 1;
    timers.advance(HEARTBEAT_MS - 1);
    expect(mine()[0]?.heartbeat).toBe(1_000_000);
    now += 1;
    timers.advance(1);
    expect(mine()[0]?.heartbeat).toBe(1_000_000 + HEARTBEAT_MS);
    p.stop();
    expect(mine()).toEqual([]);
    expect(timers.pending()).toBe(0);
    p.stop();
  });

  it('a beat that cannot be written is skipped, and the next one writes again', () => {
    const timers = manualTimers();
    const p = createChatPresence({ root: bus.root, me: { id: 'tester', origin: bus.home }, pid: process.pid, now: Date.now, timers });
    const mine = () => readPresence(bus.root).filter((r) => r.id === 'tester');
    p.start();
    // The bus root is a file now: nothing under it can be written.
    rmSync(bus.root, { recursive: true, force: true });
    writeFileSync(bus.root, 'not a directory');
    expect(() => timers.advance(HEARTBEAT_MS)).not.toThrow();
    rmSync(bus.root);
    expect(mine()).toEqual([]);
    timers.advance(HEARTBEAT_MS);
    expect(mine()).toHaveLength(1);
    p.stop();
  });
});
