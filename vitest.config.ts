import { defineConfig } from 'vitest/config';

// Three tiers (issue 19 §5; style.md, "Tests, in tiers"):
// - `unit`: in-process against real temporary buses, no child processes (test/setup/in-process.ts
//   fails a test that starts one), no soak; the inner loop, `npm run test:unit`.
// - `slow`: in-process too, but long: soak, load and model (property) tests, in test/slow/.
// - `e2e`: spawns the built binary, races real processes, drives tmux, nats-server and a real
//   Claude Code (installed by its global setup, once, into .tools/), in test/e2e/.
// `npm test` builds and runs all three.
const inProcess = ['test/setup/in-process.ts'];
// In-process files share one module graph per worker (isolate: false): no test mocks a module
// or changes process-wide state, every bus is its own temporary directory, and loading the
// tools once per worker instead of once per file is most of the unit tier's CPU time.

export default defineConfig({
  // Each checkout keeps its own cache (vitest orders files by the durations it recorded), not
  // in node_modules, which worktrees may share.
  cacheDir: '.vitest-cache',
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Suites that spawn many processes share two cores; keep them from starving each other.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts', 'test/**/*.test.tsx'], exclude: ['test/e2e/**', 'test/slow/**'], setupFiles: inProcess, isolate: false },
      },
      {
        extends: true,
        // Bounded by count; the deadline is only for a loaded machine.
        test: { name: 'slow', include: ['test/slow/**/*.test.ts'], setupFiles: inProcess, isolate: false, testTimeout: 600_000 },
      },
      {
        extends: true,
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts', 'test/e2e/**/*.test.tsx'], globalSetup: ['test/setup/claude-code.ts'] },
      },
    ],
  },
});
