// `attend web`: the person's browser front end (issue 24 §1). The command checks the address,
// finds the built page, starts the server (tools/web/server.ts), prints the one-time login
// URL, opens a browser with --open, and runs until SIGINT/SIGTERM. Fastify and the page load
// only here, so they cost nothing to every other verb.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createVerbCtx } from '../../verbs/context.js';
import { AttendError, EXIT, usageError } from '../../wire/errors.js';
import type { Ctx } from '../context.js';

interface WebInput {
  host: string;
  port: string;
  open: boolean;
  tlsKey?: string | undefined;
  tlsCert?: string | undefined;
}

const PAGE = fileURLToPath(new URL('../../../web/app.js', import.meta.url));

/** Runs until a signal; resolves with the exit code. */
export async function runWeb(ctx: Ctx, input: WebInput): Promise<number> {
  const { isLoopback, startWebServer } = await import('../../web/server.js');
  const port = Number(input.port);
  if (!/^\d+$/.test(input.port) || port > 65535) throw usageError(`--port ${JSON.stringify(input.port)} is not a port number`);
  if ((input.tlsKey === undefined) !== (input.tlsCert === undefined)) throw usageError('--tls-key and --tls-cert go together');
  const tls = input.tlsKey !== undefined && input.tlsCert !== undefined ? { key: input.tlsKey, cert: input.tlsCert } : undefined;
  if (!isLoopback(input.host) && !tls) {
    throw usageError(
      `refusing to serve on ${input.host}: only 127.0.0.1 without TLS`,
      'give --tls-key and --tls-cert, or keep 127.0.0.1 and reach it through an SSH tunnel (ssh -L 8080:127.0.0.1:PORT host)',
    );
  }
  if (!existsSync(PAGE)) throw new AttendError('the web page is not built (dist/web/app.js is missing)', EXIT.usage, 'run npm install (or npm run build) in the attend checkout');
  const makeCtx = () => createVerbCtx({ env: ctx.env, cwd: ctx.cwd, pid: ctx.pid, now: ctx.now, identity: 'human' });
  // Refuses (exit 4) unless this process is the person: a session cannot open the person's page.
  makeCtx().identity();
  const server = await startWebServer({ makeCtx, host: input.host, port, ...(tls ? { tls } : {}), now: ctx.now, pageScript: readFileSync(PAGE, 'utf8'), pid: ctx.pid });
  ctx.stdout.write(`attend web on ${server.origin}\nopen this once (it works for 2 minutes, one time):\n  ${server.loginUrl}\n`);
  if (input.open) {
    const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
    try {
      const child = spawn(opener, [server.loginUrl], { detached: true, stdio: 'ignore' });
      child.on('error', () => ctx.stderr.write(`attend web: cannot run ${opener}; open the URL above by hand\n`));
      child.unref();
    } catch {
      ctx.stderr.write(`attend web: cannot run ${opener}; open the URL above by hand\n`);
    }
  }
  const code = await new Promise<number>((resolve) => {
    process.once('SIGINT', () => resolve(130));
    process.once('SIGTERM', () => resolve(143));
    process.once('SIGHUP', () => resolve(129));
  });
  await server.close();
  return code === 130 ? 0 : code;
}
