// `attend signer`: signs for the sessions whose Bash tool runs in Claude Code's sandbox, where
// the key directory is out of reach (issue 20 §7; tools/bus/trust/signer.ts; docs/trust.md,
// "Inside Claude Code's sandbox"). One per bus, on the port `attend install` chose
// (ATTEND_SIGNER=127.0.0.1:<port>), outside the sandbox: the SessionStart hook starts it
// (ensureSigner) and it stops once no session it answered for is alive.

import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Ctx } from '../context.js';
import { askSigner, createSignerService, signerPort } from '../../bus/trust/index.js';
import { ensureDir, stateDir, writeFileAtomic } from '../../bus/store/index.js';
import { localHostName } from '../../bus/presence/index.js';
import { peerSession } from '../../identity/peer.js';
import { processAlive, procInfo, systemReaders } from '../../identity/system.js';
import { AttendError, EXIT } from '../../wire/errors.js';
import { stopSignal } from './stop-signal.js';

const MAX_REQUEST = 256 * 1024;
/** How often the signer looks whether the sessions it serves are still alive. */
const WATCH_MS = 2_000;
/** A signer no session has asked anything of stops after this long. */
const IDLE_MS = 60_000;

function signerState(root: string): string {
  return join(stateDir(root), 'signer.json');
}

function sessionPids(sessionsDir: string): number[] {
  try {
    return readdirSync(sessionsDir)
      .filter((n) => /^\d+\.json$/.test(n))
      .map((n) => Number(n.slice(0, -5)));
  } catch {
    return [];
  }
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST) {
        resolve(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

export async function runSigner(ctx: Ctx, input: { watch?: number; stopSignal?: Promise<void> }): Promise<'stopped' | 'running-elsewhere'> {
  const port = signerPort(ctx.env);
  if (port === null) throw new AttendError('ATTEND_SIGNER is not set to 127.0.0.1:<port>', EXIT.environment, 'attend install sets it in Claude Code settings (env.ATTEND_SIGNER)');
  const root = ctx.root();
  const answer = createSignerService({ root, keysDir: ctx.paths.keysDir, host: localHostName(root) ?? hostname(), now: ctx.now });
  const readers = systemReaders({ env: {}, sessionsDir: ctx.paths.sessionsDir, cwd: ctx.cwd, pid: ctx.pid });
  // The claude processes this signer answered for (pid → start time): it runs while one lives.
  const served = new Map<number, string>();
  let everServed = false;
  const watch = (pid: number) => {
    everServed = true;
    if (!served.has(pid)) served.set(pid, procInfo(pid)?.start ?? '');
  };
  if (input.watch !== undefined && processAlive(input.watch)) watch(input.watch);

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const reply = (status: number, text: string) => {
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      if (body === null) return reply(400, JSON.stringify({ error: 'the request is too large' }));
      const peer = peerSession({ remotePort: req.socket.remotePort ?? 0, localPort: port, readers, sessionPids: sessionPids(ctx.paths.sessionsDir) });
      if (!peer.ok) return reply(403, JSON.stringify({ error: `not answered: ${peer.reason}` }));
      watch(peer.record.pid);
      const path = new URL(req.url ?? '/', 'http://signer').pathname;
      const a = answer(peer.record, path, body);
      reply(a.status, a.body);
    })().catch((err: unknown) => {
      ctx.stderr.write(`attend signer: ${(err as Error)?.message ?? String(err)}\n`);
      if (!res.headersSent) res.writeHead(500).end(JSON.stringify({ error: 'the signer failed; see its log' }));
    });
  });
  const listening = await new Promise<boolean>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!listening) return 'running-elsewhere';

  const started = ctx.now();
  ensureDir(stateDir(root));
  writeFileAtomic(signerState(root), `${JSON.stringify({ pid: ctx.pid, start: procInfo(ctx.pid)?.start ?? '', port })}\n`);
  const stop = stopSignal(input.stopSignal);
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve) => {
      void stop.signal.then(resolve);
      timer = setInterval(() => {
        for (const [pid, start] of served) if (!processAlive(pid, start)) served.delete(pid);
        // Every session it answered for has ended, or none ever asked.
        if (served.size === 0 && (everServed || ctx.now() - started > IDLE_MS)) resolve();
      }, WATCH_MS);
    });
  } finally {
    clearInterval(timer);
    stop.dispose();
    server.close();
    server.closeAllConnections();
    rmSync(signerState(root), { force: true });
  }
  return 'stopped';
}

/** The signer's log: its stderr, beside its state file. */
function signerLog(root: string): string {
  return join(stateDir(root), 'signer.log');
}

const READY_MS = 5_000;

/**
 * For the SessionStart hook: make sure the signer answers for this session, starting it
 * detached when nothing listens on its port. 'off' when attend's install named no signer.
 * The hook's own request is how a running signer learns of one more session to live for.
 */
export function ensureSigner(ctx: Ctx, claudePid: number): 'off' | 'running' | 'started' | 'failed' {
  const port = signerPort(ctx.env);
  if (port === null) return 'off';
  const ask = () => {
    try {
      askSigner({ port }, '/whoami', {});
      return true;
    } catch {
      return false;
    }
  };
  if (ask()) return 'running';
  const script = process.argv[1];
  if (!script) return 'failed';
  let log: number | 'ignore' = 'ignore';
  try {
    ensureDir(stateDir(ctx.root()));
    log = openSync(signerLog(ctx.root()), 'a', 0o600);
  } catch {
    // no log, still a signer
  }
  try {
    const child = spawn(process.execPath, [script, 'signer', '--watch', String(claudePid)], { detached: true, stdio: ['ignore', 'ignore', log], env: { ...ctx.env } as NodeJS.ProcessEnv, cwd: ctx.cwd });
    child.unref();
    if (child.pid === undefined) return 'failed';
  } catch {
    return 'failed';
  } finally {
    if (typeof log === 'number') closeSync(log);
  }
  // The first sandboxed command may come right after the hook: wait until the signer answers.
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (const deadline = Date.now() + READY_MS; Date.now() < deadline; ) {
    if (ask()) return 'started';
    Atomics.wait(wait, 0, 0, 50);
  }
  return 'failed';
}
