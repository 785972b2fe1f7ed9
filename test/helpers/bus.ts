// Test helpers for the e2e tier: everything of ./temp-bus.ts (a temporary bus and home, runCli
// in-process, waitFor), plus real processes: the built binary, and fake Claude Code sessions
// that are live child processes. The unit and slow tiers import ./temp-bus.ts instead, whose
// sessions are in-process stand-ins (test/architecture.test.ts keeps it so).

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../../tools/cli/commands/install.js';
import { type FakeSession, type RunResult, type SessionOpts, type TempBus, liveTask, recordSession, useTempBus as useTempBusWith, waitFor } from './temp-bus.js';

export { ME, type FakeSession, type RunResult, type SessionOpts, type TempBus, makeTempBus, procStart, removeTree, runInProcess, useFamilyPolicy, waitFor } from './temp-bus.js';

export const BIN = fileURLToPath(new URL('../../dist/tools/cli/bin.js', import.meta.url));

/**
 * A stand-in for a running Claude Code session: a live thread of this test process with a
 * session record that names it, and the env its children would inherit. Identity comes from
 * the process ancestry (issue 20 §1): an `attend` this process starts has this process for
 * its parent, and CLAUDE_PID naming a thread of an ancestor agrees with the ancestry, so the
 * child is that session. A separate sleeper process would not be an ancestor of anything the
 * test runs. A test of the ancestry itself uses real process trees (./session-tree.ts).
 */
export function fakeSession(bus: TempBus, opts: SessionOpts = {}): FakeSession {
  const t = liveTask();
  return recordSession(bus, t.tid, () => t.end(), opts);
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

/**
 * Run the built binary detached: `launch` is handed a script to start under `setsid -f` (a new
 * session, forked away, so the caller is not its ancestor any more). The script's exit status
 * and output land in files, awaited with a deadline.
 */
export async function runDetached(bus: TempBus, args: string[], launch: (script: string) => unknown): Promise<RunResult> {
  const dir = join(bus.dir, `detached-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir);
  const q = shellQuote;
  const script = join(dir, 'run.sh');
  writeFileSync(script, `${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} >${q(`${dir}/out`)} 2>${q(`${dir}/err`)}; echo $? >${q(`${dir}/status.tmp`)}; mv ${q(`${dir}/status.tmp`)} ${q(`${dir}/status`)}\n`);
  await launch(script);
  await waitFor(() => existsSync(join(dir, 'status')), { what: `detached attend ${args[0]}` });
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { exitCode: Number(read('status').trim()), stdout: read('out'), stderr: read('err') };
}

/** Every signal line written anywhere on the bus. */
export function allSignals(bus: TempBus): string[] {
  const root = join(bus.root, 'signals');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((d) => readdirSync(join(root, d)).filter((f) => f.endsWith('.signal')).map((f) => readFileSync(join(root, d, f), 'utf8')));
}
