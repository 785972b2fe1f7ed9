// Claude Code's inbox gives each sender a bucket of 30 posts, refilled at 0.5 a second, and
// drops a post that overflows it (../shared/claude-code.md, "Delivery paths"). The deliverer
// keeps its own bucket, a little smaller, so a busy bus waits and batches more messages into
// the next post instead of losing posts to the limit.

const BURST = 28;
const REFILL_PER_S = 0.5;

export interface PostBucket {
  /** 0: a post may go now, and takes a token; else the milliseconds until one may. */
  take(): number;
}

export function createPostBucket(now: () => number, burst = BURST, perSecond = REFILL_PER_S): PostBucket {
  let tokens = burst;
  let at = now();
  return {
    take() {
      const t = now();
      tokens = Math.min(burst, tokens + ((t - at) / 1000) * perSecond);
      at = t;
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.ceil(((1 - tokens) / perSecond) * 1000);
    },
  };
}
