// relay/status.json: when it is due (pure), and the board that writes it over a real bus.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { StatusBoard, statusDue } from '../../tools/relay/status-board.js';
import type { RelayStatus } from '../../tools/relay/store.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

describe('statusDue', () => {
  const last = { at: 10_000, shape: 'a' };
  it.each([
    { now: 10_100, force: true, shape: 'a', due: true, why: 'forced, however soon' },
    { now: 10_499, force: false, shape: 'b', due: false, why: 'a change within 500 ms waits' },
    { now: 10_500, force: false, shape: 'b', due: true, why: 'a change after 500 ms' },
    { now: 13_999, force: false, shape: 'a', due: false, why: 'no change, under 4 s' },
    { now: 14_000, force: false, shape: 'a', due: true, why: 'no change, but 4 s passed (readers judge liveness by it)' },
  ])('$why', ({ now, force, shape, due }) => {
    expect(statusDue(now, force, shape, last)).toBe(due);
  });
});

describe('StatusBoard', () => {
  const read = () => JSON.parse(readFileSync(join(bus.root, 'relay', 'status.json'), 'utf8')) as RelayStatus;

  it('writes the status with the outbound backlog, at most twice a second unless forced', () => {
    let t = 1_000_000;
    let backlog = 3;
    const board = new StatusBoard(bus.root, () => t, { pid: 42, host: 'alpha', hub: 'nats://x', parked: 1 }, () => backlog);
    board.save();
    expect(read()).toMatchObject({ pid: 42, host: 'alpha', hub: 'nats://x', parked: 1, connected: false, outboundBacklog: 3, startedAt: 1_000_000, updatedAt: 1_000_000 });
    t += 100;
    backlog = 7;
    board.status.published = 5;
    board.save();
    expect(read().published).toBe(0);
    t += 400;
    board.save();
    expect(read()).toMatchObject({ published: 5, outboundBacklog: 7, updatedAt: 1_000_500 });
    // Unchanged: rewritten only after 4 s (its updatedAt is what says the relay is alive).
    t += 3_000;
    board.save();
    expect(read().updatedAt).toBe(1_000_500);
    t += 1_000;
    board.save();
    expect(read().updatedAt).toBe(1_004_500);
    t += 1;
    board.status.connected = true;
    board.save(true);
    expect(read()).toMatchObject({ connected: true, updatedAt: 1_004_501 });
  });

  it('keeps the status fresh on its own while nothing saves it, until stopFresh', async () => {
    const board = new StatusBoard(bus.root, Date.now, { pid: 42, host: 'alpha', hub: 'nats://x', parked: 0 }, () => 0);
    board.save(true);
    const first = read().updatedAt;
    board.keepFresh();
    try {
      // Rewritten within the 4 s rest interval (and a margin), with no save from a loop.
      await waitFor(() => read().updatedAt > first, { timeoutMs: 8_000, what: 'a rewrite with nobody saving' });
    } finally {
      board.stopFresh();
    }
  });
});
