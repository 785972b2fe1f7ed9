// The fast path for `attend send` and `attend reply` (issue #2, Performance: send within
// 1.5× of `node -e 0`). Loading commander and the full command graph costs about as much
// as starting node, so the executable (attend.cts) routes the plain forms of these two verbs here. Anything this
// parser is not sure about (help, an unknown or repeated flag, a missing message) returns
// null and the full CLI handles it, so the two paths never disagree about an error.
// postbuild bundles this module into one file: resolving ~20 ESM files is the other half
// of the cost.

import { runSend, urgencyOf } from '../verbs/send.js';
import { runReply } from '../verbs/reply.js';
import { runWhoami } from '../verbs/whoami.js';
import { whoamiText } from './whoami-text.js';
import { writeSync } from 'node:fs';
import { createContext, type CtxOptions, type Output } from './context.js';
import { createIo, messageFrom, printSent, reportError } from './io.js';

interface FastArgs {
  verb: 'send' | 'reply';
  words: string[];
  to: string[];
  channel?: string;
  re?: string;
  onBehalfOf?: string;
  urgent?: boolean;
  quiet?: boolean;
  json: boolean;
}

const BOOLEAN = new Set(['--json', '--urgent', '--quiet']);

const VALUED = new Set(['--to', '--channel', '--re', '--on-behalf-of']);

/** Parse the subset of send/reply that the fast path serves; null means "use the full CLI". */
export function parseFastArgs(argv: string[]): FastArgs | null {
  const verb = argv[0];
  if (verb !== 'send' && verb !== 'reply') return null;
  const out: FastArgs = { verb, words: [], to: [], json: false };
  const seen = new Set<string>();
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      out.words.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-' || !arg.startsWith('-')) {
      out.words.push(arg);
      continue;
    }
    if (BOOLEAN.has(arg)) {
      if (seen.has(arg)) return null;
      seen.add(arg);
      if (arg === '--json') out.json = true;
      else if (arg === '--urgent') out.urgent = true;
      else out.quiet = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (!VALUED.has(flag)) return null;
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i += 1;
    }
    // A value that looks like a flag is a mistake commander explains better.
    if (value === undefined || value.startsWith('-')) return null;
    if (flag === '--to') {
      out.to.push(value);
      continue;
    }
    if (seen.has(flag)) return null;
    seen.add(flag);
    if (flag === '--channel') out.channel = value;
    else if (flag === '--re') out.re = value;
    else out.onBehalfOf = value;
  }
  return out.words.length > 0 ? out : null;
}

/**
 * Write straight to a file descriptor: process.stdout/stderr cost ~3 ms each to create.
 * A non-blocking pipe that is full (EAGAIN) hands the rest to the stream, which waits.
 */
function fdOutput(fd: 1 | 2): Output {
  return {
    write(text: string) {
      const buf = Buffer.from(text, 'utf8');
      let off = 0;
      try {
        while (off < buf.length) off += writeSync(fd, buf, off);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        (fd === 1 ? process.stdout : process.stderr).write(buf.subarray(off));
      }
      return true;
    },
  };
}

export async function runFastSend(args: FastArgs, opts: CtxOptions = {}): Promise<{ exitCode: number }> {
  const ctx = createContext({ stdout: fdOutput(1), stderr: fdOutput(2), ...opts });
  let exitCode = 0;
  const io = createIo(ctx, (c) => {
    exitCode = c;
  });
  try {
    const message = await messageFrom(ctx, args.words);
    const input = {
      message,
      to: args.to.length > 0 ? args.to : undefined,
      channel: args.channel,
      re: args.re,
      onBehalfOf: args.onBehalfOf,
      urgency: urgencyOf(args),
    };
    const r = args.verb === 'send' ? runSend(ctx, input) : runReply(ctx, input);
    printSent(io, r, args.json);
    return { exitCode };
  } catch (err) {
    return { exitCode: reportError(err, io) };
  }
}

/**
 * `attend whoami` and `attend whoami --json` on the same fast path (the first command a
 * newcomer runs after set-up, "The first hour" Performance): the verb and its one text form,
 * without commander. null when the arguments are anything else (the full CLI answers).
 */
export function parseFastWhoami(argv: string[]): { json: boolean } | null {
  if (argv[0] !== 'whoami') return null;
  if (argv.length === 1) return { json: false };
  return argv.length === 2 && argv[1] === '--json' ? { json: true } : null;
}

export function runFastWhoami(args: { json: boolean }, opts: CtxOptions = {}): { exitCode: number } {
  const ctx = createContext({ stdout: fdOutput(1), stderr: fdOutput(2), ...opts });
  let exitCode = 0;
  const io = createIo(ctx, (c) => {
    exitCode = c;
  });
  try {
    const r = runWhoami(ctx);
    if (args.json) io.json(r);
    else io.out(whoamiText(r));
    return { exitCode };
  } catch (err) {
    return { exitCode: reportError(err, io) };
  }
}
