// The signer: signing for a session whose commands cannot read the key directory (issue 20 §7;
// docs/trust.md, "Inside Claude Code's sandbox"). `attend install` keeps the key directory out
// of Claude Code's sandbox and lets sandboxed commands reach one address, 127.0.0.1:<port>
// (ATTEND_SIGNER), through the session's own proxy; `attend signer` listens there, outside
// the sandbox, started by the SessionStart hook. It answers a request only for the session
// the kernel says the request comes from (tools/identity/peer.ts), and signs only messages
// whose from_id is that session, with that session's key, on its own bus.
//
// The protocol is JSON over HTTP/1.1 (the proxy forwards HTTP, not a socket of our own):
//   POST /whoami  {}                          -> {session}
//   POST /sign    {root, id, scope, line}     -> {sidecar}
// Anything else, or a refusal, is {error} with 400/403/409.

import { readFileSync } from 'node:fs';
import type { SessionRecord } from '../../identity/resolve.js';
import { type Envelope, type Scope, SIGNAL_ID_CLASS, WIDE_CLASS, formatSignal, parseSignal } from '../../wire/envelope.js';
import { AttendError, EXIT } from '../../wire/errors.js';
import { type Signer, createSigner } from './signing.js';

/** What the signer tells a session about itself. */
export interface SignerSession {
  sessionId: string;
  /** The claude process (a pid of the host, not of the sandbox's pid namespace). */
  pid: number;
  cwd?: string;
  name?: string;
  kind?: string;
  /** The bus this signer signs for. */
  root: string;
}

export interface SignerService {
  root: string;
  keysDir: string;
  host: string;
  now: () => number;
}

interface Answer {
  status: number;
  body: string;
}

const json = (status: number, o: unknown): Answer => ({ status, body: JSON.stringify(o) });
const refuse = (status: number, error: string): Answer => json(status, { error });

function parseScopeField(raw: unknown): Scope | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const s = raw as { kind?: unknown; name?: unknown; key?: unknown };
  const word = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 128 && WIDE_CLASS.test(v);
  if (s.kind === 'open') return { kind: 'open' };
  if (s.kind === 'channel' && word(s.name)) return { kind: 'channel', name: s.name as string };
  if (s.kind === 'tray' && word(s.key)) return { kind: 'tray', key: s.key as string };
  return null;
}

/**
 * Answer one request from the session `who` (already settled from the kernel's view of the
 * connection, never from the request). Pure over the service: the HTTP server is the CLI's.
 */
export function createSignerService(service: SignerService): (who: SessionRecord, path: string, body: string) => Answer {
  const signer: Signer = createSigner(service);
  return (who, path, body) => {
    let req: Record<string, unknown> = {};
    try {
      const parsed: unknown = body.trim() ? JSON.parse(body) : {};
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return refuse(400, 'the request is not a JSON object');
      req = parsed as Record<string, unknown>;
    } catch {
      return refuse(400, 'the request is not JSON');
    }
    if (path === '/whoami') {
      const session: SignerSession = { sessionId: who.sessionId, pid: who.pid, root: service.root };
      if (who.cwd !== undefined) session.cwd = who.cwd;
      if (who.name !== undefined) session.name = who.name;
      if (who.kind !== undefined) session.kind = who.kind;
      return json(200, { session });
    }
    if (path !== '/sign') return refuse(400, `no such request: ${path.slice(0, 40)}`);
    if (req.root !== service.root) return refuse(409, `this signer signs for the bus ${service.root}, not ${String(req.root).slice(0, 200)}`);
    const id = req.id;
    if (typeof id !== 'string' || id.length > 64 || !SIGNAL_ID_CLASS.test(id)) return refuse(400, 'id is not a message id');
    const scope = parseScopeField(req.scope);
    if (!scope) return refuse(400, 'scope is not open, a channel or a tray');
    const env: Envelope | null = typeof req.line === 'string' ? parseSignal(req.line) : null;
    if (!env) return refuse(400, 'line is not a message line');
    // Only the session's own words: a line written as anyone else is not signed, whatever asks.
    const sid = who.sessionId;
    if (env.fromId !== sid || env.from !== `claude:${sid}` || env.fromKind !== 'agent') {
      return refuse(403, `this connection is session ${sid}; the line is from ${String(env.fromId ?? env.from).slice(0, 80)}`);
    }
    return json(200, { sidecar: signer.sidecar(id, scope, env) });
  };
}

// ---- the client: a command inside the sandbox -------------------------------------------

export interface SignerAddress {
  port: number;
  /** The sandbox's proxy (its HTTP_PROXY): the only way out of the sandbox's network namespace. */
  proxy?: { host: string; port: number; auth?: string };
}

const SIGNER = /^127\.0\.0\.1:(\d{1,5})$/;

/** The signer's port from ATTEND_SIGNER (`127.0.0.1:<port>`), or null. */
export function signerPort(env: Readonly<Record<string, string | undefined>>): number | null {
  const m = SIGNER.exec(env.ATTEND_SIGNER ?? '');
  const port = m ? Number(m[1]) : 0;
  return port > 0 && port < 65536 ? port : null;
}

/**
 * Is this process inside Claude Code's sandbox? The sandbox runtime marks its commands
 * (SANDBOX_RUNTIME=1), and the first process of the sandbox's pid namespace is the bwrap that
 * made it, whose arguments set that mark: a command that strips its environment (`env -i`)
 * is still told by the second, and is never taken for the person at a terminal.
 */
export function inClaudeSandbox(env: Readonly<Record<string, string | undefined>>, readInit: () => string = () => readFileSync('/proc/1/cmdline', 'latin1')): boolean {
  if (env.SANDBOX_RUNTIME === '1') return true;
  let argv: string[];
  try {
    argv = readInit().split('\0');
  } catch {
    return false;
  }
  return /(^|\/)bwrap$/.test(argv[0] ?? '') && argv.some((a, i) => a === '--setenv' && argv[i + 1] === 'SANDBOX_RUNTIME' && argv[i + 2] === '1');
}

/**
 * Where a command inside Claude Code's sandbox asks for its identity and its signatures: the
 * signer attend's install named (ATTEND_SIGNER), through the sandbox's proxy; null when no
 * signer is named (a process that strips it gains nothing: inside the sandbox it cannot see
 * its session, and the key directory is not there to read).
 */
export function sandboxSigner(env: Readonly<Record<string, string | undefined>>): SignerAddress | null {
  const port = signerPort(env);
  if (port === null) return null;
  const raw = env.HTTP_PROXY ?? env.http_proxy;
  if (!raw) return { port };
  try {
    const u = new URL(raw);
    const auth = u.username ? Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64') : undefined;
    return { port, proxy: { host: u.hostname, port: Number(u.port) || 80, ...(auth ? { auth } : {}) } };
  } catch {
    return { port };
  }
}

// Verbs are synchronous (the store writes the signature file before the message), and Node has
// no synchronous socket: one worker thread per process makes the request while this thread
// waits on a shared flag. The worker's code is inline (`eval`): the bundled send fast path
// (fast-send.cjs) has no file to name.
const WORKER = `
const { workerData } = require('node:worker_threads');
const http = require('node:http');
const { port, flag } = workerData;
port.on('message', (m) => {
  let sent = false;
  const done = (r) => { if (sent) return; sent = true; port.postMessage(r); Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); };
  const req = http.request(m.options, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => done({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
    res.on('error', (e) => done({ error: e.code || e.message }));
  });
  req.on('error', (e) => done({ error: e.code || e.message }));
  req.setTimeout(m.timeout, () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
  req.end(m.body);
});
`;

interface Channel {
  call(options: object, body: string, timeoutMs: number): { status?: number; body?: string; error?: string };
}

let channel: Channel | undefined;

function syncChannel(): Channel {
  if (channel) return channel;
  const wt = process.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads');
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new wt.MessageChannel();
  const worker = new wt.Worker(WORKER, { eval: true, workerData: { port: port2, flag }, transferList: [port2] });
  worker.unref();
  port1.unref();
  channel = {
    call(options, body, timeoutMs) {
      Atomics.store(flag, 0, 0);
      port1.postMessage({ options, body, timeout: timeoutMs });
      // The worker's own timeout answers first; this one covers a worker that never started.
      Atomics.wait(flag, 0, 0, timeoutMs + 5_000);
      const m = wt.receiveMessageOnPort(port1);
      return m ? (m.message as { status?: number; body?: string; error?: string }) : { error: 'the request worker did not answer' };
    },
  };
  return channel;
}

const TIMEOUT_MS = 10_000;

/** POST to the signer and wait for the answer; an AttendError says what went wrong. */
export function askSigner(addr: SignerAddress, path: string, request: object): Record<string, unknown> {
  const body = JSON.stringify(request);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), host: `127.0.0.1:${addr.port}` };
  const options = addr.proxy
    ? { host: addr.proxy.host, port: addr.proxy.port, method: 'POST', path: `http://127.0.0.1:${addr.port}${path}`, headers: { ...headers, ...(addr.proxy.auth ? { 'proxy-authorization': `Basic ${addr.proxy.auth}` } : {}) } }
    : { host: '127.0.0.1', port: addr.port, method: 'POST', path, headers };
  const r = syncChannel().call(options, body, TIMEOUT_MS);
  const where = `attend's signer at 127.0.0.1:${addr.port}${addr.proxy ? ' (through the sandbox proxy)' : ''}`;
  const hint = 'the SessionStart hook starts it; run attend install, then start the session again';
  if (r.error !== undefined) throw new AttendError(`${where} did not answer (${r.error})`, EXIT.environment, hint);
  let answer: Record<string, unknown> = {};
  try {
    answer = JSON.parse(r.body ?? '') as Record<string, unknown>;
  } catch {
    // not ours: a proxy's refusal page, or another program on that port
  }
  if (r.status !== 200) {
    const why = typeof answer.error === 'string' ? answer.error : `HTTP ${r.status ?? '?'}${r.status === 403 && !answer.error ? ': the sandbox proxy refused the address (is it in sandbox.network.allowedDomains?)' : ''}`;
    throw new AttendError(`${where} refused: ${why}`, r.status === 403 ? EXIT.refused : EXIT.environment, hint);
  }
  return answer;
}

/** The session the signer says this process belongs to. */
export function signerSession(addr: SignerAddress): SignerSession {
  const s = askSigner(addr, '/whoami', {}).session as SignerSession | undefined;
  if (!s || typeof s.sessionId !== 'string' || typeof s.pid !== 'number' || typeof s.root !== 'string') {
    throw new AttendError(`attend's signer at 127.0.0.1:${addr.port} gave no session`, EXIT.environment);
  }
  return s;
}

/** A Signer whose signatures come from the signer, for the bus at `root`. */
export function createRemoteSigner(addr: SignerAddress, root: string): Signer {
  return {
    sidecar(id, scope, env) {
      const r = askSigner(addr, '/sign', { root, id, scope, line: formatSignal(env) });
      if (typeof r.sidecar !== 'string') throw new AttendError(`attend's signer at 127.0.0.1:${addr.port} gave no signature`, EXIT.environment);
      return r.sidecar;
    },
  };
}
