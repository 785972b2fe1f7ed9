// The trace's stall watch: a blocked event loop is logged with how long it was blocked.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/temp-bus.js';
import { watchStalls } from '../../tools/relay/trace.js';

describe('watchStalls', () => {
  it('logs a stall of the event loop, and nothing once stopped', async () => {
    const lines: string[] = [];
    const stop = watchStalls((l) => lines.push(l), 100);
    await new Promise((r) => setTimeout(r, 30));
    const until = Date.now() + 250;
    while (Date.now() < until) {
      // block the event loop
    }
    // (A busy machine may add a stall of its own: the one made here is at least 200 ms.)
    await waitFor(() => lines.some((l) => Number(/(\d+)ms$/.exec(l)?.[1]) >= 200), { what: 'the stall line' });
    for (const l of lines) expect(l).toMatch(/^trace: event loop stalled \d+ms$/);
    stop();
    const n = lines.length;
    const again = Date.now() + 250;
    while (Date.now() < again) {
      // blocked again, unwatched
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(lines).toHaveLength(n);
  });
});
