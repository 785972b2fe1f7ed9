// The fast path for `attend doctor` and `attend doctor --json` ("The first hour", Performance:
// the first commands a newcomer runs start within 2x `node -e 0`): the checks and their one
// printed form (commands/doctor.ts), without commander; postbuild bundles it into one CJS
// file, fast-doctor.cjs, as it does fast-send. Any other arguments take the full CLI.

import { printDoctor, runDoctor } from './commands/doctor.js';
import { type CtxOptions, createContext } from './context.js';
import { createIo, reportError } from './io.js';

export function parseFastDoctor(argv: string[]): { json: boolean } | null {
  if (argv[0] !== 'doctor') return null;
  if (argv.length === 1) return { json: false };
  return argv.length === 2 && argv[1] === '--json' ? { json: true } : null;
}

export async function runFastDoctor(args: { json: boolean }, opts: CtxOptions = {}): Promise<number> {
  const ctx = createContext(opts);
  let exitCode = 0;
  const io = createIo(ctx, (c) => {
    exitCode = c;
  });
  try {
    printDoctor(io, await runDoctor(ctx), args.json);
    return exitCode;
  } catch (err) {
    return reportError(err, io);
  }
}
