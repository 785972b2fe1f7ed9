// `attend web`: the person's browser front end (issue 24 §1). The command checks the address,
// finds the built page, starts the server (tools/web/server.ts), prints the one-time login
// URL, opens a browser with --open, and runs until SIGINT/SIGTERM. Fastify and the page load
// only here, so they cost nothing to every other verb.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createVerbCtx } from '../../verbs/context.js';
import { AttendError, EXIT, usageError } from '../../wire/errors.js';
import type { Ctx } from '../context.js';

interface WebInput {
  /** Print a fresh login URL for the server already running on this bus, and exit. */
  login?: boolean;
  host: string;
  port: string;
  open: boolean;
  tlsKey?: string | undefined;
  tlsCert?: string | undefined;
}

const PAGE = fileURLToPath(new URL('../../../web/app.js', import.meta.url));

function openBrowser(ctx: Ctx, url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => ctx.stderr.write(`attend web: cannot run ${opener}; open the URL above by hand\n`));
    child.unref();
  } catch {
    ctx.stderr.write(`attend web: cannot run ${opener}; open the URL above by hand\n`);
  }
}

/** `attend web --login`: a one-time URL for the server running on this bus, as the person. */
async function newLogin(ctx: Ctx, root: string, open: boolean): Promise<number> {
  const { LOGIN_TTL_MS } = await import('../../web/server.js');
  const { issueLogin, runningServer } = await import('../../web/logins.js');
  const server = runningServer(root);
  if (!server) throw new AttendError('no attend web is running on this bus', EXIT.notFound, 'start one with attend web');
  const token = randomBytes(32).toString('base64url');
  issueLogin(root, token, ctx.now() + LOGIN_TTL_MS);
  const url = `${server.origin}/login?token=${token}`;
  ctx.stdout.write(`open this once (it works for 2 minutes, one time):\n  ${url}\n`);
  if (open) openBrowser(ctx, url);
  return 0;
}

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
  if (input.login) return newLogin(ctx, makeCtx().root(), input.open);
  const server = await startWebServer({ makeCtx, host: input.host, port, ...(tls ? { tls } : {}), now: ctx.now, pageScript: readFileSync(PAGE, 'utf8'), pid: ctx.pid });
  ctx.stdout.write(`attend web on ${server.origin}\nopen this once (it works for 2 minutes, one time):\n  ${server.loginUrl}\n`);
  if (input.open) openBrowser(ctx, server.loginUrl);
  const code = await new Promise<number>((resolve) => {
    process.once('SIGINT', () => resolve(130));
    process.once('SIGTERM', () => resolve(143));
    process.once('SIGHUP', () => resolve(129));
  });
  await server.close();
  return code === 130 ? 0 : code;
}
