import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites that spawn many processes share two cores; keep them from starving each other.
    maxWorkers: 2,
  },
});
