#!/usr/bin/env node
// The `attend` executable. CommonJS on purpose: node starts a CJS entry ~4 ms faster than
// an ESM one, and `attend send` has to stay within 1.5× of `node -e 0` (issue #2).
// `send`, `reply` and `whoami` take a fast path (and `search`, fast-search.ts) (fast-send.ts) that postbuild bundles into one CJS
// file, fast-send.cjs, skipping commander and the other commands; everything else, and
// anything the fast path is unsure of, goes to the full CLI in cli.ts. Without the bundle
// (no rolldown at build time) the ESM modules serve the same code. `attend mcp [--channel]`
// takes fast-mcp.ts, which answers the client's `initialize` before loading the server;
// `attend hook pre-tool-use`, fast-claims.ts.

/** The fast paths postbuild bundles, each one CJS file beside this one. */
interface FastModules {
  'fast-send': typeof import('./fast-send.js');
  'fast-doctor': typeof import('./fast-doctor.js');
  'fast-mcp': typeof import('./fast-mcp.js');
  'fast-claims': typeof import('./fast-claims.js');
  'fast-search': typeof import('./fast-search.js');
}

/** A fast path's bundle, or (no bundle: built without rolldown) its ESM module. */
async function loadFast<K extends keyof FastModules>(name: K): Promise<FastModules[K]> {
  try {
    return require(`./${name}.cjs`) as FastModules[K];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    return (await import(`./${name}.js`)) as FastModules[K];
  }
}

/**
 * `attend`, `attend --help` and `attend completion <shell>` from the text postbuild wrote
 * with the full CLI (dist/tools/cli/first-commands.json), without loading commander or the
 * bus: they are the first commands a person types, and must start as fast as node. Help
 * is 80 columns wide at most, so a narrower terminal (or COLUMNS) takes the full CLI, which
 * wraps to it. False when this path does not apply.
 */
function firstCommand(argv: string[]): boolean {
  const key = argv.length === 0 || (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) ? 'help' : argv.length === 2 && argv[0] === 'completion' ? `completion ${argv[1]}` : null;
  if (key === null) return false;
  const columns = Number(process.env.COLUMNS ?? '');
  if (key === 'help' && ((columns > 0 && columns < 80) || (process.stdout.isTTY && process.stdout.columns < 80))) return false;
  let texts: Record<string, string>;
  try {
    texts = JSON.parse(require('node:fs').readFileSync(require('node:path').join(__dirname, 'first-commands.json'), 'utf8') as string) as Record<string, string>;
  } catch {
    return false;
  }
  const text = texts[key];
  if (text === undefined) return false;
  // A reader that stops early (`attend --help | head`) has what it wanted.
  process.stdout.on('error', () => {});
  process.stdout.write(text);
  return true;
}

async function main(argv: string[]): Promise<number> {
  if (firstCommand(argv)) return 0;
  if (argv[0] === 'send' || argv[0] === 'reply') {
    const fast = await loadFast('fast-send');
    const args = fast.parseFastArgs(argv);
    if (args) return (await fast.runFastSend(args)).exitCode;
  }
  if (argv[0] === 'whoami') {
    const fast = await loadFast('fast-send');
    const args = fast.parseFastWhoami(argv);
    if (args) return fast.runFastWhoami(args).exitCode;
  }
  if (argv[0] === 'doctor') {
    const fast = await loadFast('fast-doctor');
    const args = fast.parseFastDoctor(argv);
    if (args) return fast.runFastDoctor(args);
  }
  // The PreToolUse hook runs before every edit (issue 23 §2): fast-claims.ts.
  if (argv[0] === 'hook' && argv[1] === 'pre-tool-use') {
    const fast = await loadFast('fast-claims');
    if (fast.parseFastClaimsHook(argv)) return fast.runPreToolUseHook();
  }
  if (argv[0] === 'search') {
    const fast = await loadFast('fast-search');
    const args = fast.parseFastSearch(argv);
    if (args) return fast.runFastSearch(args);
  }
  if (argv[0] === 'mcp') {
    const fast = await loadFast('fast-mcp');
    const args = fast.parseFastMcp(argv);
    // Written by postbuild beside the server (dist/tools/mcp/); absent, tools/list waits for the server.
    if (args) return fast.runFastMcp({ ...args, toolsList: require('node:path').join(__dirname, '..', 'mcp', 'tools-list.json') as string });
  }
  const { runCli } = await import('./cli.js');
  return (await runCli(argv)).exitCode;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Only a bug gets here (every command reports its own errors): say so, exit 70.
    process.stderr.write(`attend: internal error: ${String((err as Error)?.message ?? err).replace(/\s*\n\s*/g, ' ')}; this is a bug in attend; please report it with the command you ran (attend --version)\n`);
    process.exitCode = 70;
  },
);
