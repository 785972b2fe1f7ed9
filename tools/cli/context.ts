// The CLI's context: the verbs' context (tools/verbs/context.ts) plus the standard streams,
// which only front ends touch.

import { type VerbCtx, createVerbCtx } from '../verbs/context.js';

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface Ctx extends VerbCtx {
  stdout: Output;
  stderr: Output;
  stdin: NodeJS.ReadableStream;
}

export interface CtxOptions {
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  pid?: number;
  stdout?: Output;
  stderr?: Output;
  stdin?: NodeJS.ReadableStream;
  now?: () => number;
  /** 'human': `attend chat`, which refuses unless this process is the person (tools/verbs/context.ts). */
  identity?: 'resolve' | 'human';
  /** The person's name for an in-process caller (tests); never from a flag or the environment. */
  userName?: string;
  /** A detached conduit's claude process, from its own first resolution (tools/verbs/context.ts). */
  startedFor?: { pid: number; start?: string };
}

const guarded = new WeakSet<object>();

/**
 * A reader that goes away early (`attend inbox | head`) closes the pipe: what it wanted has
 * been written, so the command ends quietly instead of dying on an unhandled EPIPE.
 */
function quietOnClosedPipe<T extends NodeJS.WritableStream>(stream: T): T {
  if (!guarded.has(stream)) {
    guarded.add(stream);
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
      throw err;
    });
  }
  return stream;
}

export function createContext(opts: CtxOptions = {}): Ctx {
  // The standard streams are created on first touch, which costs ~3 ms each (it loads
  // node's stream machinery); `attend send` never touches stdin, so they stay lazy.
  const stderr = (): Output => opts.stderr ?? quietOnClosedPipe(process.stderr);
  const base = createVerbCtx({
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? process.cwd(),
    pid: opts.pid ?? process.pid,
    now: opts.now ?? Date.now,
    warn: (line) => void stderr().write(`${line}\n`),
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.userName !== undefined ? { userName: opts.userName } : {}),
    ...(opts.startedFor ? { startedFor: opts.startedFor } : {}),
  });
  return Object.defineProperties(base as Ctx, {
    stdout: { get: () => opts.stdout ?? quietOnClosedPipe(process.stdout), enumerable: true },
    stderr: { get: stderr, enumerable: true },
    stdin: { get: () => opts.stdin ?? process.stdin, enumerable: true },
  });
}
