import { defineConfig } from 'vitest/config';

// Two projects (issue #9 §7): `unit` runs in-process against real temporary buses and is
// what a developer runs on every change (`npm run test:unit`); `e2e` spawns the built
// binary, races real processes, drives tmux and a real Claude Code. `npm test` runs both.
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites that spawn many processes share two cores; keep them from starving each other.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts', 'test/**/*.test.tsx'], exclude: ['test/e2e/**'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts', 'test/e2e/**/*.test.tsx'] } },
    ],
  },
});
