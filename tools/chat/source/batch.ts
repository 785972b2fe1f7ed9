// Arrivals are handed to the screen in batches, at most one every `batchMs`.

import type { Timers } from './timers.js';

/**
 * At most ~10 arrival updates a second. Every update re-renders the screen (Ink draws whole
 * frames, ~5 ms here) and opens its 16 ms frame throttle, and a keystroke that lands behind
 * one waits for both: at 50 messages/s, one update per message put the keystroke p95 at
 * ~36 ms. Batching keeps arrivals well inside the 250 ms the issue allows (issue #5 §4).
 */
export const ARRIVAL_BATCH_MS = 100;

/** After a quiet spell, this long gathers the files of one fan-out (written back to back). */
export const GATHER_MS = 5;

interface Batcher<T> {
  push(item: T): void;
  /** Drop what is waiting, and the timer. */
  cancel(): void;
}

export function createBatcher<T>(deps: { timers: Timers; batchMs?: number; deliver(items: T[]): void }): Batcher<T> {
  const batchMs = deps.batchMs ?? ARRIVAL_BATCH_MS;
  let pending: T[] = [];
  let lastFlush = -Infinity;
  let cancelTimer: (() => void) | null = null;

  function flush(): void {
    cancelTimer = null;
    lastFlush = deps.timers.now();
    const batch = pending;
    pending = [];
    if (batch.length > 0) deps.deliver(batch);
  }

  return {
    push(item) {
      pending.push(item);
      if (cancelTimer) return;
      // Under a stream, the next update waits for its batch slot.
      const wait = Math.max(GATHER_MS, lastFlush + batchMs - deps.timers.now());
      cancelTimer = deps.timers.after(wait, flush);
    },
    cancel() {
      cancelTimer?.();
      cancelTimer = null;
      pending = [];
    },
  };
}
