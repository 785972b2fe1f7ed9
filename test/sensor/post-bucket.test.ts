// The deliverer's own post bucket (tools/sensor/post-bucket.ts): it stays inside Claude Code's
// 30 posts per sender, refilled at 0.5 a second, so no post is dropped for rate.

import { describe, expect, it } from 'vitest';
import { createPostBucket } from '../../tools/sensor/post-bucket.js';

describe('the post bucket', () => {
  it('lets a burst through, then one post per refill, and never more than Claude Code accepts', () => {
    let t = 0;
    const bucket = createPostBucket(() => t);
    const burst: number[] = [];
    while (bucket.take() === 0) burst.push(t);
    expect(burst.length).toBeLessThan(30);
    expect(burst.length).toBeGreaterThan(20);
    // Empty: the next post may go once a whole token has come back.
    const wait = bucket.take();
    expect(wait).toBe(2000);
    t += wait;
    expect(bucket.take()).toBe(0);
    expect(bucket.take()).toBe(2000);
    // Over a long busy stretch, what it lets through stays within 30 + 0.5/s.
    let posts = 0;
    for (let i = 0; i < 60_000; i += 100) {
      t += 100;
      if (bucket.take() === 0) posts++;
    }
    expect(posts).toBeLessThanOrEqual(30 + 0.5 * 60);
  });
});
