// `attend deliver`: the socket conduit for a session with no plugin monitor (issue 21 §2;
// tools/sensor/deliverer.ts). The SessionStart hook starts it detached (startDeliverer);
// it runs until its Claude process is gone. Diagnostics go to its log under state/sensor/.

import { spawn } from 'node:child_process';
import { closeSync, unlinkSync } from 'node:fs';
import { type Ctx, createContext } from '../context.js';
import { claimDelivererSlot, delivererLog, openDelivererLog, readDeliverer, releaseDelivererSlot } from '../../bus/delivery/index.js';
import { AttendError, EXIT } from '../../wire/errors.js';
import { processAlive } from '../../identity/system.js';
// The sensor's modules load only in the deliverer itself, not in the hook that starts it.
import type { DelivererExit } from '../../sensor/deliverer.js';
import { stopSignal } from './stop-signal.js';

const environmentError = (msg: string) => new AttendError(msg, EXIT.environment);

export async function runDeliver(ctx: Ctx, input: { poll: boolean; interval: number; stopSignal?: Promise<void> }): Promise<DelivererExit> {
  const socket = ctx.env.CLAUDE_CODE_MESSAGING_SOCKET;
  if (!socket) throw environmentError('no CLAUDE_CODE_MESSAGING_SOCKET: attend deliver runs for a Claude Code session (2.1.332 or later), started by its SessionStart hook');
  const root = ctx.root();
  const who = ctx.identity();
  if (!who.resolved || who.pid === undefined) throw environmentError(`attend deliver needs a Claude Code session (${who.reason})`);
  const claudePid = who.pid;
  if (!claimDelivererSlot(root, claudePid, ctx.pid)) return { reason: 'signal', delivered: 0 };
  const warn = (line: string) => void ctx.stderr.write(`${line}\n`);
  const stop = stopSignal(input.stopSignal);
  try {
    const { runDeliverer } = await import('../../sensor/deliverer.js');
    const exit = await runDeliverer({
      root,
      sessionsDir: ctx.paths.sessionsDir,
      identity: who,
      env: ctx.env,
      socket,
      pid: ctx.pid,
      now: ctx.now,
      reporter: ctx.reporter,
      procInfo: ctx.procInfo,
      warn,
      // A model's SendMessage answer to a post is the session's reply (issue 21 §2), written as
      // `attend reply` would write it, in a context of its own: the identity and the roster as
      // they are now (after a /clear, say), not as they were when the deliverer started.
      answered: async ({ text, re }) => {
        const { runReply } = await import('../../verbs/reply.js');
        // The deliverer has left the hook's process tree by now, so its session is the claude
        // process it resolved to at its start (startedFor), as that process's record says now.
        const startedFor = { pid: claudePid, ...(who.record?.procStart !== undefined ? { start: who.record.procStart } : {}) };
        const now = createContext({ env: ctx.env, cwd: ctx.cwd, pid: ctx.pid, now: ctx.now, stderr: ctx.stderr, startedFor });
        return runReply(now, { message: text, ...(re !== undefined ? { re } : {}) }).id;
      },
      poll: input.poll,
      pollIntervalMs: input.interval,
      stopSignal: stop.signal,
    });
    if (exit.reason === 'held') warn(`attend: the session ${exit.receipt ?? 'held'} the deliverer's posts (crossSessionInbound, or a permission mode that holds posts from outside the session); messages arrive at the end of each turn, or arm the Monitor tool with attend run`);
    // The log says why a deliverer stopped while its session lives; with the session gone it has nothing to say.
    if (exit.reason === 'claude-gone') {
      try {
        unlinkSync(delivererLog(root, claudePid));
      } catch {
        // none
      }
    }
    return exit;
  } finally {
    releaseDelivererSlot(root, claudePid, ctx.pid);
    stop.dispose();
  }
}

const RESOLVED_MS = 5_000;

/**
 * Start `attend deliver` for the hook's session, detached (the hook returns within its
 * timeout), unless one already runs for this Claude process. Its stderr is its log. The hook
 * waits until the deliverer holds its slot, which it takes once it has resolved its identity:
 * identity comes from the process ancestry (issue 20 §1), and the deliverer's runs through
 * this hook only while the hook lives.
 */
export function startDeliverer(ctx: Ctx, claudePid: number): 'started' | 'running' | 'failed' {
  const root = ctx.root();
  if (readDeliverer(root, claudePid) !== null) return 'running';
  const script = process.argv[1];
  if (!script) return 'failed';
  let log: number | 'ignore' = 'ignore';
  try {
    log = openDelivererLog(root, claudePid);
  } catch {
    // no log, still a deliverer
  }
  try {
    const child = spawn(process.execPath, [script, 'deliver'], { detached: true, stdio: ['ignore', 'ignore', log], env: { ...ctx.env } as NodeJS.ProcessEnv, cwd: ctx.cwd });
    child.unref();
    const pid = child.pid;
    if (pid === undefined) return 'failed';
    const wait = new Int32Array(new SharedArrayBuffer(4));
    for (const deadline = Date.now() + RESOLVED_MS; Date.now() < deadline; ) {
      if (readDeliverer(root, claudePid)?.pid === pid) return 'started';
      // Exited (a zombie until this hook ends): it found no session, or one already ran.
      if (!processAlive(pid)) return readDeliverer(root, claudePid) !== null ? 'running' : 'failed';
      Atomics.wait(wait, 0, 0, 10);
    }
    return 'failed';
  } catch {
    return 'failed';
  } finally {
    if (typeof log === 'number') closeSync(log);
  }
}
