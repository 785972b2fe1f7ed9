// The fast path for `attend mcp` and `attend mcp --channel`, the forms a client starts
// (issue #11 §9: the `initialize` answer within 1.5× of `node -e 0`). The CLI's context and
// commander cost about half of node's own start, so the answer goes out from stdio.ts and
// info.ts alone; the context, the SDK and the tools load right after, in attachServer.
// Anything else (help, another flag) goes to the full CLI.

import { readFileSync } from 'node:fs';
import { serverIdentity } from '../mcp/info.js';
import { serveStdio } from '../mcp/stdio.js';
import { VERSION } from './version.js';

/** The argv this path serves, or null for the full CLI. */
export function parseFastMcp(argv: string[]): { channel: boolean } | null {
  if (argv[0] !== 'mcp') return null;
  const rest = argv.slice(1);
  if (rest.length > 1 || rest.some((a) => a !== '--channel')) return null;
  return { channel: rest.length === 1 };
}

export async function runFastMcp(opts: { channel: boolean; toolsList?: string }): Promise<number> {
  const warn = (line: string) => void process.stderr.write(`${line}\n`);
  let attached: { close(): Promise<void> } | undefined;
  try {
    await serveStdio({
    input: process.stdin,
    output: process.stdout,
    identity: serverIdentity({ version: VERSION, channel: opts.channel }),
    earlyTools: opts.toolsList ? () => JSON.parse(readFileSync(opts.toolsList as string, 'utf8')) as { tools: unknown[] } : undefined,
    warn,
    attach: async (port) => {
      const [{ createContext }, { attachServer }] = await Promise.all([import('./context.js'), import('./commands/mcp.js')]);
      const makeCtx = () => createContext({});
      // An unusable bus root fails here with the CLI's error (exit 3), right after `initialize`.
      makeCtx().root();
      attached = await attachServer(port, { makeCtx, channel: opts.channel, warn });
    },
    });
  } catch (err) {
    // The CLI's own words and exit code (an unusable bus root is 3), loaded only now.
    const { reportError } = await import('./io.js');
    process.stdin.destroy();
    const err1 = (t: string) => void process.stderr.write(t.endsWith('\n') ? t : `${t}\n`);
    return reportError(err, { out: err1, err: err1, json: () => undefined } as unknown as Parameters<typeof reportError>[1]);
  }
  await attached?.close();
  return Number(process.exitCode ?? 0);
}
