// Fixtures for the delivery tests of the e2e tier: everything of ./fixtures.ts (messages
// written through the bus library, identities, ids read from output), and a real `attend run`
// child process.

import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './bus.js';

export { type Put, agent, headerIds, ids, join, leave, put, traceIds } from './fixtures.js';

export interface SensorProc {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** A real `attend run` as a child process, its output collected as it comes. */
export function startSensor(env: Record<string, string>, args: string[] = [], cwd?: string): SensorProc {
  return startAttend(['run', ...args], env, cwd);
}

/** Any `attend` command as a child process that runs on while the test goes on (`attend ask`). */
export function startAttend(args: string[], env: Record<string, string>, cwd?: string): SensorProc {
  const proc = spawn(process.execPath, [BIN, ...args], { env, cwd: cwd ?? env.HOME, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  // 'close', not 'exit': the process can exit before its last output has been read.
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exited };
}
