// Timers that move only when a test says so (tools/chat/source/timers.ts): the chat's loops
// are stepped through their schedule instead of waited for.

import type { Timers } from '../../tools/chat/source/timers.js';

export interface ManualTimers extends Timers {
  /** Move the clock on by `ms`, running every timer that falls due, in order. */
  advance(ms: number): void;
  /** Timers waiting to run. */
  pending(): number;
}

export function manualTimers(start = 0): ManualTimers {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { at: number; every: number | null; fn: () => void }>();
  const add = (ms: number, fn: () => void, every: number | null) => {
    const id = ++seq;
    timers.set(id, { at: now + ms, every, fn });
    return () => void timers.delete(id);
  };
  return {
    now: () => now,
    after: (ms, fn) => add(ms, fn, null),
    every: (ms, fn) => add(ms, fn, ms),
    pending: () => timers.size,
    advance(ms) {
      const until = now + ms;
      for (;;) {
        let next: [number, { at: number; every: number | null; fn: () => void }] | null = null;
        for (const e of timers) if (e[1].at <= until && (!next || e[1].at < next[1].at)) next = e;
        if (!next) break;
        const [id, t] = next;
        now = t.at;
        if (t.every === null) timers.delete(id);
        else t.at += t.every;
        t.fn();
      }
      now = until;
    },
  };
}
