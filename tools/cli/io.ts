// Output and error reporting shared by cli.ts and the send fast path (fast-send.ts). Kept
// free of commander so `attend send` can report exactly as the full CLI does without
// loading it.

import { AttendError, EXIT, REPORT_URL_HINT, hintForCli } from '../wire/errors.js';
import type { Ctx } from './context.js';

export interface Io {
  /** Set the exit code for a command that completes but did not succeed (e.g. a check). */
  setExitCode(code: number): void;
  out(text: string): void;
  err(text: string): void;
  json(value: unknown): void;
}

export function createIo(ctx: Ctx, setExitCode: (code: number) => void): Io {
  return {
    setExitCode,
    out: (t) => ctx.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    err: (t) => ctx.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
    json: (v) => ctx.stdout.write(`${JSON.stringify(v, null, 2)}\n`),
  };
}

/**
 * Report an error as one stderr line, `attend: <message>; <hint>`, and return its exit code.
 * One line so a caller (a hook, a model reading tool output) sees the whole story at once.
 */
export function reportError(err: unknown, io: Io): number {
  if (err instanceof AttendError) {
    io.err(`attend: ${oneLine(err.message)}${err.hint ? `; ${oneLine(hintForCli(err.hint))}` : ''}`);
    return err.exitCode;
  }
  // A system call that failed (EACCES, ENOSPC, EIO...) is the bus being unusable, not a bug.
  const sys = err as NodeJS.ErrnoException | undefined;
  if (typeof sys?.code === 'string' && /^E[A-Z0-9]+$/.test(sys.code) && typeof sys.syscall === 'string') {
    io.err(`attend: ${oneLine(sys.message)}`);
    return EXIT.bus;
  }
  return reportInternal(err, io);
}

/**
 * Anything that is not an AttendError is a bug in attend, not a broken bus: its own exit
 * code and a pointer to report it (issue #9 §5). Still one line.
 */
function reportInternal(err: unknown, io: Pick<Io, 'err'>): number {
  const e = err as Error | undefined;
  const where = e?.stack?.split('\n')[1]?.trim() ?? '';
  io.err(`attend: internal error: ${oneLine(e?.message ?? String(err))}${where ? ` (${oneLine(where)})` : ''}; ${REPORT_URL_HINT}`);
  return EXIT.internal;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

async function readStdin(ctx: Ctx): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(Buffer.from(chunk as Buffer));
  // One trailing newline is how `echo` and heredocs end text; it is not part of the message.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** The message words as given, or stdin when the only word is `-`. */
export async function messageFrom(ctx: Ctx, words: string[]): Promise<string> {
  if (words.length === 1 && words[0] === '-') return readStdin(ctx);
  return words.join(' ');
}

interface SentLike {
  id: string;
  notes: string[];
}

export function printSent(io: Io, r: SentLike, json?: boolean): void {
  for (const note of r.notes) io.err(`attend: ${note}`);
  if (json) return io.json(r);
  io.out(r.id);
}

/**
 * The width a table must fit: COLUMNS when set (as git and gh read it), else the terminal's;
 * undefined when stdout is not a terminal, where nothing is cut.
 */
export function terminalWidth(out: { isTTY?: boolean; columns?: number }, env: Readonly<Record<string, string | undefined>>): number | undefined {
  if (out.isTTY !== true) return undefined;
  const fromEnv = /^\d+$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : 0;
  if (fromEnv > 0) return fromEnv;
  return out.columns !== undefined && out.columns > 0 ? out.columns : 80;
}
