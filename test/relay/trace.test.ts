// The trace's stall watch: a blocked event loop is logged with how long it was blocked.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/bus.js';
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
    await waitFor(() => lines.length > 0, { what: 'the stall line' });
    expect(lines[0]).toMatch(/^trace: event loop stalled \d+ms$/);
    expect(Number(/(\d+)ms/.exec(lines[0]!)?.[1])).toBeGreaterThanOrEqual(200);
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
