// The arrival batch (tools/chat/source/batch.ts) on stepped timers: a fan-out written back to
// back is one update, a stream is one update per slot, and nothing is handed over after cancel.

import { describe, expect, it } from 'vitest';
import { ARRIVAL_BATCH_MS, createBatcher, GATHER_MS } from '../../../tools/chat/source/batch.js';
import { manualTimers } from '../../helpers/timers.js';

function batcher() {
  const timers = manualTimers(1000);
  const out: number[][] = [];
  const b = createBatcher<number>({ timers, deliver: (xs) => out.push(xs) });
  return { timers, out, b };
}

describe('arrival batch', () => {
  it('after a quiet spell, gathers for GATHER_MS and hands over once', () => {
    const { timers, out, b } = batcher();
    b.push(1);
    b.push(2);
    timers.advance(GATHER_MS - 1);
    expect(out).toEqual([]);
    b.push(3);
    timers.advance(1);
    expect(out).toEqual([[1, 2, 3]]);
  });

  it('under a stream, one update per ARRIVAL_BATCH_MS slot', () => {
    const { timers, out, b } = batcher();
    b.push(1);
    timers.advance(GATHER_MS);
    // Every 10 ms another one: the next update waits for its slot, counted from the last.
    for (let i = 2; i <= 31; i++) {
      b.push(i);
      timers.advance(10);
    }
    // 300 ms of stream, three slots.
    expect(out.map((xs) => xs.length)).toEqual([1, 10, 10, 10]);
    expect(out.flat()).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
    b.push(32);
    timers.advance(ARRIVAL_BATCH_MS - 1);
    expect(out).toHaveLength(4);
    timers.advance(1);
    expect(out.at(-1)).toEqual([32]);
  });

  it('cancel drops what waits and its timer', () => {
    const { timers, out, b } = batcher();
    b.push(1);
    b.cancel();
    expect(timers.pending()).toBe(0);
    timers.advance(ARRIVAL_BATCH_MS * 2);
    expect(out).toEqual([]);
    b.push(2);
    timers.advance(GATHER_MS);
    expect(out).toEqual([[2]]);
  });
});
