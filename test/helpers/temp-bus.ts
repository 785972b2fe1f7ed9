// In-process test helpers (the unit and slow tiers): a temporary bus and home, runCli
// in-process, polling for a condition, and stand-ins for running Claude Code sessions. Nothing
// here starts a child process; test/helpers/bus.ts adds the built binary and sessions that
// are real processes, for the e2e tier.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, vi } from 'vitest';
import { runCli } from '../../tools/cli/cli.js';
import { updatePolicy } from '../../tools/bus/trust/policy.js';
import { sanitizeMemberId } from '../../tools/wire/envelope.js';
import { listLive } from '../../tools/bus/presence/index.js';
import { procInfo } from '../../tools/identity/system.js';

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

/**
 * Write a `family` policy (every node of the bus reaches every other; anyone posts to #open):
 * what a bus without a policy file did before issue 20 made groups the default. For tests
 * about something other than permissions (delivery, listings, the chat), whose nodes have no
 * recorded lineage and so would each be a group of their own. It goes through the policy
 * module, as `attend policy --mode family --open everyone` would.
 */
export function useFamilyPolicy(bus: TempBus): void {
  mkdirSync(bus.root, { recursive: true, mode: 0o700 });
  updatePolicy(bus.root, { kind: 'human', id: ME }, (p) => {
    p.mode = 'family';
    p.open = 'everyone';
  });
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
  /** Ends the session: its process (or stand-in) is gone and its record removed when this returns. */
  kill(): void;
  /**
   * Ends the session after its test: the record goes; a stand-in's thread may stand in for a
   * session of a later test (on another bus), a process is killed.
   */
  dispose(): void;
}

export interface SessionOpts {
  cwd?: string;
  name?: string;
  sessionId?: string;
  status?: string;
  version?: string;
}

let sessionCounter = 0;

/**
 * Write the session record Claude Code keeps for a running session (`<claudeDir>/sessions/
 * <pid>.json`) for a live task `pid`, and return the env its children would inherit. `end`
 * ends the task; `kill()` ends it and removes the record, as Claude Code does on exit.
 * `release` is what `dispose()` does with the task instead (by default, end it).
 */
export function recordSession(bus: TempBus, pid: number, end: () => void, opts: SessionOpts = {}, release: () => void = end): FakeSession {
  const sessionId = opts.sessionId ?? `00000000-0000-4000-8000-${String(++sessionCounter).padStart(12, '0')}`;
  const cwd = opts.cwd ?? join(bus.dir, 'work', `proj${sessionCounter}`);
  mkdirSync(cwd, { recursive: true });
  const record: Record<string, unknown> = { pid, sessionId, cwd, procStart: procStart(pid), startedAt: Date.now() + sessionCounter, status: opts.status ?? 'idle', kind: 'interactive' };
  if (opts.name) record.name = opts.name;
  if (opts.version) record.version = opts.version;
  const recordFile = join(bus.claudeDir, 'sessions', `${pid}.json`);
  writeFileSync(recordFile, JSON.stringify(record));
  let ended = false;
  const finish = (how: () => void) => {
    if (!ended) how();
    ended = true;
    rmSync(recordFile, { force: true });
  };
  return {
    pid,
    sessionId,
    cwd,
    env: { ...bus.env, CLAUDECODE: '1', CLAUDE_PID: String(pid), CLAUDE_CODE_SESSION_ID: sessionId },
    kill: () => finish(end),
    dispose: () => finish(release),
  };
}

// The stand-in's thread reports its own task id (the tid the kernel gave it) and then idles.
const STAND_IN = `const { workerData } = require('node:worker_threads');
Atomics.store(workerData, 0, Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()));
Atomics.notify(workerData, 0);
setInterval(() => {}, 1 << 30);`;

/** The ids of this process's threads. */
function tasks(): Set<number> {
  return new Set(readdirSync('/proc/self/task').map(Number));
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A live task that is not a child process: a worker thread. On Linux each thread is a task of
 * its own, with its own id, and `/proc/<tid>/stat` answers for it with its own start time
 * (field 22) until the thread ends, then is gone. That is all attend reads of a session's
 * process (processAlive, the record's procStart, the roster), so a thread stands in for the
 * claude process. It differs only in what attend does not read of it: its id is not listed in
 * /proc, its parent and command line are this test process's, and nothing can run below it
 * (a test of process ancestry needs a real process: e2e).
 */
export function liveTask(): { tid: number; end(): void } {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const before = tasks();
  const worker = new Worker(STAND_IN, { eval: true, workerData: cell, stdout: true, stderr: true });
  worker.unref();
  // The thread exists once the constructor returns: the one new task of this process is it,
  // so there is no need to wait for it to boot. Should anything else have started a thread
  // meanwhile, the thread says which it is.
  const fresh = [...tasks()].filter((t) => !before.has(t));
  let tid = fresh.length === 1 ? (fresh[0] as number) : 0;
  if (tid === 0) {
    if (Atomics.wait(cell, 0, 0, 30_000) === 'timed-out') {
      void worker.terminate();
      throw new Error('a stand-in session thread did not start within 30 s');
    }
    tid = Atomics.load(cell, 0);
  }
  return {
    tid,
    // Ended when this returns, as a SIGKILLed process is dead (a zombie) almost at once.
    end: () => {
      void worker.terminate();
      const deadline = Date.now() + 10_000;
      while (existsSync(`/proc/${tid}/stat`)) {
        if (Date.now() > deadline) throw new Error(`the stand-in session thread ${tid} did not end within 10 s`);
        pause(1);
      }
    },
  };
}

// Threads whose sessions ended with their tests, still live: the next stand-in takes one
// instead of booting a thread (a new bus has never seen it). As many as one test had at once.
const idle: { tid: number; end(): void }[] = [];

/** A stand-in for a running Claude Code session, in-process: a live thread and a session record that names it. */
export function fakeSession(bus: TempBus, opts: SessionOpts = {}): FakeSession {
  let task = idle.pop();
  while (task && !existsSync(`/proc/${task.tid}/stat`)) task = idle.pop();
  const t = task ?? liveTask();
  return recordSession(bus, t.tid, () => t.end(), opts, () => void idle.push(t));
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Run the CLI in-process with captured streams; `user` names the person (only in-process);
 * `terminal` makes the captured stdout a terminal of that many columns.
 */
export async function runInProcess(args: string[], opts: { env: Record<string, string>; cwd?: string; pid?: number; user?: string; terminal?: { columns: number } }): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const { Readable } = await import('node:stream');
  const { exitCode } = await runCli(args, {
    env: opts.env,
    cwd: opts.cwd ?? opts.env.HOME ?? process.cwd(),
    ...(opts.pid !== undefined ? { pid: opts.pid } : {}),
    ...(opts.user !== undefined ? { userName: opts.user } : {}),
    stdout: { write: (t: string) => (stdout += t), ...(opts.terminal ? { isTTY: true, columns: opts.terminal.columns } : { isTTY: false }) },
    stderr: { write: (t: string) => (stderr += t) },
    stdin: Readable.from([]),
  });
  return { exitCode, stdout, stderr };
}

/** Poll a predicate until it holds or the deadline passes. */
export async function waitFor<T>(fn: () => T | undefined | null | false | Promise<T | undefined | null | false>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  // vitest's own poller; a falsy value (or a promise of one) counts as "not yet", and the
  // deadline names what was awaited.
  const settled = (v: T | undefined | null | false): T => {
    if (!v) throw new Error(`timed out waiting for ${opts.what ?? 'condition'}`);
    return v;
  };
  return vi.waitFor(
    () => {
      const v = fn();
      return v instanceof Promise ? v.then(settled) : settled(v);
    },
    { timeout: opts.timeoutMs ?? 10_000, interval: opts.intervalMs ?? 20 },
  );
}

export type SessionMaker = (bus: TempBus, opts?: SessionOpts) => FakeSession;

/**
 * Per test: a fresh temporary bus (handed to `onBus`) and a `session()` maker whose sessions
 * are ended after the test, then the bus is removed. Sessions are in-process stand-ins
 * unless `makeSession` says otherwise (test/helpers/bus.ts passes real processes).
 */
export function useTempBus(onBus: (bus: TempBus) => void, makeSession: SessionMaker = fakeSession): (opts?: SessionOpts) => FakeSession {
  let current: TempBus | undefined;
  const sessions: FakeSession[] = [];
  beforeEach(() => {
    current = makeTempBus();
    onBus(current);
  });
  afterEach(() => {
    for (const s of sessions.splice(0)) s.dispose();
    current?.cleanup();
  });
  return (opts = {}) => {
    if (!current) throw new Error('useTempBus: session() outside a test');
    const s = makeSession(current, opts);
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
      pause(100);
    }
  }
}

/**
 * One pass of the live roster, as any `attend` command makes: whoever is live now is given
 * its name (tools/bus/presence/names.ts), which it keeps when someone else arrives later.
 */
export function seeLive(bus: TempBus): void {
  mkdirSync(bus.root, { recursive: true, mode: 0o700 });
  listLive({ root: bus.root, sessionsDir: join(bus.claudeDir, 'sessions'), now: Date.now(), procInfo });
}

/**
 * A declared agent (ATTEND_AGENT, ATTEND_AGENT_ID): an identity without a process, `codex-<id>`
 * by name, working in a project directory of its own on `bus`.
 */
export function declaredAgent(bus: TempBus, id: string): { env: Record<string, string>; cwd: string } {
  const cwd = join(bus.dir, 'work', id);
  mkdirSync(cwd, { recursive: true });
  return { env: { ...bus.env, ATTEND_AGENT: 'codex', ATTEND_AGENT_ID: id }, cwd };
}
