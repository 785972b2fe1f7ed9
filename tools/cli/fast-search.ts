// The fast path for `attend search` (issue 23 §4, Performance: a search at 100,000 messages
// within 100 ms as a process): the verb and its one printed form (search-text.ts) without
// commander and the other commands, which cost more than the search itself. postbuild bundles
// it into one CJS file, fast-search.cjs, as it does fast-send. Anything it does not parse
// (help, an unknown option, a missing value) takes the full CLI, which words the error.

import { type CtxOptions, createContext } from './context.js';
import { createIo, reportError } from './io.js';
import { type SearchArgs, printSearch } from './search-text.js';

const VALUED = new Set(['--from', '--channel', '--since', '--limit']);

export function parseFastSearch(argv: string[]): SearchArgs | null {
  if (argv[0] !== 'search') return null;
  const a: SearchArgs = { words: [], limit: '20' };
  let words = false;
  for (let i = 1; i < argv.length; i++) {
    const t = argv[i]!;
    if (words || !t.startsWith('-')) a.words.push(t);
    else if (t === '--') words = true;
    else if (t === '--json') a.json = true;
    else if (VALUED.has(t) && i + 1 < argv.length) {
      const v = argv[++i]!;
      if (t === '--from') a.from = v;
      else if (t === '--channel') a.channel = v;
      else if (t === '--since') a.since = v;
      else a.limit = v;
    } else return null;
  }
  return a.words.length > 0 ? a : null;
}

export function runFastSearch(args: SearchArgs, opts: CtxOptions = {}): number {
  const ctx = createContext(opts);
  let exitCode = 0;
  const io = createIo(ctx, (c) => {
    exitCode = c;
  });
  try {
    printSearch(ctx, io, args);
    return exitCode;
  } catch (err) {
    return reportError(err, io);
  }
}
