// Setup for the unit and slow tiers, which run in-process (style.md, "Tests, in tiers"): any
// child process a test starts, directly or through the code under test, fails that test by
// name. test/architecture.test.ts checks the imports statically; this catches the rest (a
// helper reached lazily, a tool that runs `ps`).

import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { afterEach } from 'vitest';

const started: string[] = [];
const names = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
for (const name of names) {
  const refuse = (...args: unknown[]): never => {
    const what = `child_process.${name}(${typeof args[0] === 'string' ? JSON.stringify(args[0]) : ''})`;
    started.push(what);
    throw new Error(`${what} in an in-process tier: a test that needs a child process belongs in test/e2e/`);
  };
  (childProcess as unknown as Record<string, unknown>)[name] = refuse;
}
// ESM named imports of a builtin see the patched functions only after this.
syncBuiltinESMExports();

afterEach(() => {
  // The code under test may have caught the error; the test still fails.
  if (started.length > 0) throw new Error(`started a child process in an in-process tier: ${started.splice(0).join(', ')}`);
});
