// The clock and timers the source's loops run on, injected so each loop is unit-tested by
// stepping time (test/helpers/timers.ts) rather than waiting for it.

export interface Timers {
  /** Milliseconds on a monotonic clock (the arrival batch's slots). */
  now(): number;
  /** Run `fn` once after `ms`; the result cancels it. */
  after(ms: number, fn: () => void): () => void;
  /** Run `fn` every `ms`; the result cancels it. */
  every(ms: number, fn: () => void): () => void;
}

export const realTimers: Timers = {
  now: () => performance.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
  every(ms, fn) {
    const t = setInterval(fn, ms);
    // A periodic loop never holds the process open by itself: the chat ends when Ink does.
    t.unref?.();
    return () => clearInterval(t);
  },
};
