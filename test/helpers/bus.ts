// Test helpers for the e2e tier: everything of ./temp-bus.ts (a temporary bus and home, runCli
// in-process, waitFor), plus real processes: the built binary, and fake Claude Code sessions
// that are live child processes. The unit and slow tiers import ./temp-bus.ts instead, whose
// sessions are in-process stand-ins (test/architecture.test.ts keeps it so).

import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type FakeSession, type RunResult, type SessionOpts, type TempBus, recordSession, useTempBus as useTempBusWith } from './temp-bus.js';

export { ME, type FakeSession, type RunResult, type SessionOpts, type TempBus, makeTempBus, procStart, removeTree, runInProcess, useFamilyPolicy, waitFor } from './temp-bus.js';

export const BIN = fileURLToPath(new URL('../../dist/tools/cli/bin.js', import.meta.url));

/**
 * A stand-in for a running Claude Code session: a live process with a session record that
 * names it, and the env its children would inherit.
 */
export function fakeSession(bus: TempBus, opts: SessionOpts = {}): FakeSession {
  const proc = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  return recordSession(bus, proc.pid as number, () => proc.kill('SIGKILL'), opts);
}

/** Run the built binary as a real process. */
export function runBin(args: string[], opts: { env: Record<string, string>; cwd?: string; input?: string }): RunResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [BIN, ...args], {
    env: opts.env,
    cwd: opts.cwd ?? opts.env.HOME,
    input: opts.input ?? '',
    encoding: 'utf8',
  });
  return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Per test: a fresh temporary bus (handed to `onBus`) and a `session()` maker whose fake
 * Claude Code sessions (live processes) are killed after the test, then the bus is removed.
 */
export function useTempBus(onBus: (bus: TempBus) => void): (opts?: SessionOpts) => FakeSession {
  return useTempBusWith(onBus, fakeSession);
}
