// Test helpers: a temporary bus and home, the built binary, and runCli in-process.

import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, vi } from 'vitest';
import { runCli } from '../../tools/cli/cli.js';
import { sanitizeMemberId } from '../../tools/wire/envelope.js';

export const BIN = fileURLToPath(new URL('../../dist/tools/cli/bin.js', import.meta.url));

/**
 * The person every test process is: the user it runs as (issue 14 §6: never $USER). A test
 * that needs a second person on one bus runs the CLI in-process with `user`.
 */
export const ME = sanitizeMemberId(userInfo().username);

export interface TempBus {
  dir: string;
  root: string;
  claudeDir: string;
  home: string;
  env: Record<string, string>;
  cleanup(): void;
}

export function makeTempBus(): TempBus {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'attend-test-')));
  const root = join(dir, 'bus');
  const claudeDir = join(dir, 'claude');
  const home = join(dir, 'home');
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    ATTEND_HOME: root,
    CLAUDE_CONFIG_DIR: claudeDir,
    NO_COLOR: '1',
  };
  return { dir, root, claudeDir, home, env, cleanup: () => removeTree(dir) };
}

export function procStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

export interface FakeSession {
  pid: number;
  sessionId: string;
  cwd: string;
  env: Record<string, string>;
  kill(): void;
}

let sessionCounter = 0;

/**
 * A stand-in for a running Claude Code session: a live process with a session record that
 * names it, and the env its children would inherit.
 */
export function fakeSession(bus: TempBus, opts: { cwd?: string; name?: string; sessionId?: string; status?: string; version?: string } = {}): FakeSession {
  const proc = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const pid = proc.pid as number;
  const sessionId = opts.sessionId ?? `00000000-0000-4000-8000-${String(++sessionCounter).padStart(12, '0')}`;
  const cwd = opts.cwd ?? join(bus.dir, 'work', `proj${sessionCounter}`);
  mkdirSync(cwd, { recursive: true });
  const record: Record<string, unknown> = { pid, sessionId, cwd, procStart: procStart(pid), startedAt: Date.now() + sessionCounter, status: opts.status ?? 'idle', kind: 'interactive' };
  if (opts.name) record.name = opts.name;
  if (opts.version) record.version = opts.version;
  writeFileSync(join(bus.claudeDir, 'sessions', `${pid}.json`), JSON.stringify(record));
  return {
    pid,
    sessionId,
    cwd,
    env: { ...bus.env, CLAUDECODE: '1', CLAUDE_PID: String(pid), CLAUDE_CODE_SESSION_ID: sessionId },
    kill: () => {
      proc.kill('SIGKILL');
      rmSync(join(bus.claudeDir, 'sessions', `${pid}.json`), { force: true });
    },
  };
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
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

/** Run the CLI in-process with captured streams; `user` names the person (only in-process). */
export async function runInProcess(args: string[], opts: { env: Record<string, string>; cwd?: string; pid?: number; user?: string }): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const { Readable } = await import('node:stream');
  const { exitCode } = await runCli(args, {
    env: opts.env,
    cwd: opts.cwd ?? opts.env.HOME ?? process.cwd(),
    ...(opts.pid !== undefined ? { pid: opts.pid } : {}),
    ...(opts.user !== undefined ? { userName: opts.user } : {}),
    stdout: { write: (t: string) => (stdout += t), isTTY: false },
    stderr: { write: (t: string) => (stderr += t) },
    stdin: Readable.from([]),
  });
  return { exitCode, stdout, stderr };
}

/** Poll a predicate until it holds or the deadline passes. */
export async function waitFor<T>(fn: () => T | undefined | null | false, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  // vitest's own poller; a falsy value counts as "not yet", and the deadline names what
  // was awaited.
  return vi.waitFor(
    () => {
      const v = fn();
      if (!v) throw new Error(`timed out waiting for ${opts.what ?? 'condition'}`);
      return v;
    },
    { timeout: opts.timeoutMs ?? 10_000, interval: opts.intervalMs ?? 20 },
  );
}

/**
 * Per test: a fresh temporary bus (handed to `onBus`) and a `session()` maker whose fake
 * Claude Code sessions are killed after the test, then the bus is removed.
 */
export function useTempBus(onBus: (bus: TempBus) => void): (opts?: Parameters<typeof fakeSession>[1]) => FakeSession {
  let current: TempBus | undefined;
  const sessions: FakeSession[] = [];
  beforeEach(() => {
    current = makeTempBus();
    onBus(current);
  });
  afterEach(() => {
    for (const s of sessions.splice(0)) s.kill();
    current?.cleanup();
  });
  return (opts = {}) => {
    if (!current) throw new Error('useTempBus: session() outside a test');
    const s = fakeSession(current, opts);
    sessions.push(s);
    return s;
  };
}

/**
 * Remove a test home whose processes may still be winding down: a sensor a killed Claude
 * left behind exits at its next tick (it notices its Claude process is gone) and may touch
 * its state until then. Retry until the tree is gone, with a deadline.
 */
export function removeTree(dir: string): void {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}
