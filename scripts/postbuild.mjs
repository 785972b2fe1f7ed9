// After tsc: make the bin executable (tsc does not keep file modes, and npm links the bin
// as-is), then bundle the send fast path into one CommonJS file, fast-send.cjs. Loading ~20
// small ESM files costs `attend send` about as much as node's own start (issue #2,
// Performance); one CJS file costs ~2 ms. Without rolldown (it comes with vite) attend.cjs
// falls back to the ESM modules.
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

for (const name of ['attend.cjs', 'bin.js']) {
  const bin = new URL(`../dist/tools/cli/${name}`, import.meta.url);
  if (existsSync(bin)) chmodSync(bin, 0o755);
}

// The same for the `attend mcp` fast path (fast-mcp.cjs): everything up to the `initialize`
// answer in one file; the context, the SDK server and the tools stay separate modules that it
// imports right after (issue #11 §9).
const bundles = [
  { file: 'fast-send.js', external: [/^node:/] },
  // `attend doctor`: the first command the README suggests after set-up.
  { file: 'fast-doctor.js', external: [/^node:/] },
  // `attend hook pre-tool-use`: the claim check before every edit (issue 23 §2).
  { file: 'fast-claims.js', external: [/^node:/] },
  { file: 'fast-search.js', external: [/^node:/] },
  { file: 'fast-mcp.js', external: [/^node:/, /^\.\/context\.js$/, /^\.\/commands\/mcp\.js$/, /^\.\/io\.js$/] },
];
// The MCP tool list, computed once here from the tool definitions, so `attend mcp` can answer
// `tools/list` before it loads the SDK and zod (tools/mcp/stdio.ts; the server checks that
// its own answer is the same).
const server = new URL('../dist/tools/mcp/server.js', import.meta.url);
if (existsSync(server)) {
  const { listToolsResult } = await import(server.href);
  writeFileSync(new URL('../dist/tools/mcp/tools-list.json', import.meta.url), JSON.stringify(listToolsResult()));
}

// The first commands a person types, `attend --help` and `attend completion <shell>`, answered
// from text the built CLI prints here, so they start as fast as node (attend.cts; the same
// text the full CLI prints, as test/e2e/completion.test.ts checks). Help is 80 columns wide
// at most (cli.ts), so this text is the help of any terminal at least that wide.
const cli = new URL('../dist/tools/cli/cli.js', import.meta.url);
if (existsSync(cli)) {
  const { runCli } = await import(cli.href);
  const capture = async (args) => {
    let out = '';
    const { exitCode } = await runCli(args, { stdout: { write: (t) => (out += t), isTTY: false }, stderr: { write: () => true }, env: { PATH: process.env.PATH ?? '' } });
    if (exitCode !== 0) throw new Error(`postbuild: attend ${args.join(' ')} exited ${exitCode}`);
    return out;
  };
  const texts = { help: await capture(['--help']) };
  for (const shell of ['bash', 'zsh', 'fish']) texts[`completion ${shell}`] = await capture(['completion', shell]);
  writeFileSync(new URL('../dist/tools/cli/first-commands.json', import.meta.url), JSON.stringify(texts));
}

let rolldown;
for (const { file, external } of bundles) {
  const input = fileURLToPath(new URL(`../dist/tools/cli/${file}`, import.meta.url));
  if (!existsSync(input)) continue;
  if (rolldown === undefined) {
    try {
      ({ rolldown } = await import('rolldown'));
    } catch {
      rolldown = null;
      console.warn('postbuild: rolldown not found; the fast paths stay unbundled');
    }
  }
  if (!rolldown) break;
  const out = input.replace(/\.js$/, '.cjs');
  rmSync(out, { force: true });
  const build = await rolldown({ input, platform: 'node', external, logLevel: 'warn' });
  await build.write({ file: out, format: 'cjs', codeSplitting: false });
  await build.close();
}

// The page of `attend web` (web/main.tsx, React), one browser bundle the server sends as
// /app.js (tools/web/server.ts). It imports the server's schema (tools/web/schema.ts) from
// source, so server and page validate with the same definitions.
{
  const page = fileURLToPath(new URL('../web/main.tsx', import.meta.url));
  if (existsSync(page)) {
    if (rolldown === undefined) {
      try {
        ({ rolldown } = await import('rolldown'));
      } catch {
        rolldown = null;
      }
    }
    if (!rolldown) console.warn('postbuild: rolldown not found; attend web has no page');
    else {
      const out = fileURLToPath(new URL('../dist/web/app.js', import.meta.url));
      rmSync(out, { force: true });
      const build = await rolldown({
        input: page,
        platform: 'browser',
        logLevel: 'warn',
        resolve: { extensionAlias: { '.js': ['.ts', '.tsx', '.js'] } },
        transform: { define: { 'process.env.NODE_ENV': '"production"' }, jsx: 'react-jsx' },
      });
      await build.write({ file: out, format: 'iife', codeSplitting: false, minify: true });
      await build.close();
    }
  }
}
