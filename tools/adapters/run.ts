// `attend adapter run` (issue 24 §3): forwards what is for the person to each configured
// outlet and writes their answers back to the bus as the person's replies. It runs as the
// person (a context that refuses to be anyone else, like the chat), keeps only the outlets'
// ledgers (ledger.ts), and never a copy of a message.
//
// Out: every cycle walks the person's inbox newest first, down to the oldest cursor less the
// grace window (a writer's id is taken a moment before its file appears), picks what is for
// the person (forPerson), and hands each outlet, oldest first, what its ledger lacks. An id
// of the window a cycle has done with (not for the person, or in every outlet's ledger) is
// remembered by name until it falls below the window, and later cycles pass its listing
// entry by unread: a cycle reads what is new, and what still waits. A
// failure stops that outlet's cycle: the message and all behind it wait, with the error and
// the next try (exponential backoff to a minute), in the outlet's status.json, which
// `attend status` reads. An outlet's cursor never passes a message that waits for it.
//
// In: one Fastify server (when some outlet takes replies) with a route per outlet kind. Each
// request is checked before anything is read from it (the generic webhook's HMAC and
// timestamp, Slack's v0 signature, Telegram's secret_token and chat), the message it answers
// must be one this outlet was sent, and the reply goes through runReply: threaded, routed by
// the bus's own rules, signed with the person's key.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { unlinkSync } from 'node:fs';
import { LEDGER_GRACE_MS } from '../bus/delivery/index.js';
import { type Message, type Wake, listScopes, scopeDir, signalsDir, wakeOnChange } from '../bus/store/index.js';
import { type DetachedSign, createDetachedSigner } from '../bus/trust/index.js';
import { processAlive } from '../identity/system.js';
import type { VerbCtx } from '../verbs/context.js';
import { scanInbox } from '../verbs/inbox.js';
import { runReply } from '../verbs/reply.js';
import { type NameLookup, addresseeLabel, nameLookup, scopeName } from '../wire/display.js';
import { listLive, readKnownNames } from '../bus/presence/index.js';
import { AttendError, refusedError, usageError } from '../wire/errors.js';
import { isNamed } from '../wire/visibility.js';
import { isMessageId } from '../wire/ids.js';
import { type Outlet, readConfig } from './config.js';
import { type Ledger, type Waiting, lockFile, openLedger, readCursor, tryLock, writeCursor, writeState } from './ledger.js';
import { type Notice, OutletError, freshTimestamp, sameSecret, send, slackSignature, webhookSignature } from './outlets.js';

/** Whether a message is for the person: mail or a mention naming them, or urgent; never their own. */
export function forPerson(m: Message, me: string): Exclude<Notice['why'], 'held'> | null {
  if (m.fromId === me) return null;
  if (isNamed(m, me)) return m.scope.kind === 'tray' ? 'direct' : 'mention';
  if (m.urgency === 'urgent') return 'urgent';
  return null;
}

function noticeOf(m: Message, why: Notice['why'], names: NameLookup): Notice {
  return {
    id: m.id,
    why,
    scope: scopeName(m.scope),
    // Named by the one name rule, as every conduit names parties (tools/wire/display.ts).
    from: names.name(m.fromId),
    fromId: m.fromId,
    to: addresseeLabel(m, names),
    re: m.re ?? null,
    urgency: m.urgency ?? null,
    time: new Date(m.time).toISOString(),
    sig: m.sig ?? null,
    body: m.body,
  };
}

const BACKOFF_MAX_MS = 60_000;
const STATE_BEAT_MS = 30_000;
export const backoff = (attempts: number) => Math.min(BACKOFF_MAX_MS, 1000 * 2 ** Math.max(0, attempts - 1));

interface OutletRun {
  outlet: Outlet;
  ledger: Ledger;
  cursor: number;
  waiting: Map<string, Waiting>;
  sign?: DetachedSign;
}

export interface AdapterRunOptions {
  /** A fresh context as the person (identity 'human'). */
  makeCtx(): VerbCtx;
  log(line: string): void;
  /** How often the inbox is walked, ms. */
  pollMs?: number;
  /** Ends the run (SIGTERM, SIGINT). */
  signal: AbortSignal;
  /** Told the listener's address once it listens. */
  listening?(url: string): void;
}

export async function adapterRun(opts: AdapterRunOptions): Promise<void> {
  const ctx = opts.makeCtx();
  const me = ctx.identity();
  if (me.kind !== 'human') throw refusedError('attend adapter run speaks as the person, and this process is not the person', 'run it from a terminal that no agent started');
  const root = ctx.root();
  const cfg = readConfig(root);
  if (cfg.outlets.length === 0) throw usageError('no outlets are configured', 'attend adapter add webhook <name> --url https://…');
  const other = tryLock(root, process.pid, (pid) => processAlive(pid, undefined, ctx.procInfo));
  if (other !== null) throw refusedError(`attend adapter run is running already (pid ${other})`);
  // The generic webhook's body is signed with the person's key as well as its HMAC secret.
  const sign = createDetachedSigner({ keysDir: ctx.paths.keysDir, root, now: () => Date.now() }, me.id);
  const runs: OutletRun[] = cfg.outlets.map((o) => ({ outlet: o, ledger: openLedger(root, o.name), cursor: readCursor(root, o.name) ?? o.since, waiting: new Map(), ...(o.kind === 'webhook' ? { sign } : {}) }));
  let listen: string | undefined;
  let server: FastifyInstance | undefined;
  if (cfg.outlets.some((o) => o.kind !== 'ntfy')) {
    server = await inbound(runs, opts);
    const addr = await server.listen({ host: cfg.listen.host, port: cfg.listen.port });
    listen = addr;
    opts.listening?.(addr);
  }
  // Written when what it says changed, and at least every STATE_BEAT_MS (a heartbeat): a run
  // with nothing arriving writes nothing else.
  const last = new Map<string, { text: string; at: number }>();
  const writeStates = () => {
    const now = Date.now();
    for (const r of runs) {
      const text = JSON.stringify([r.ledger.size(), [...r.waiting.values()]]);
      const prev = last.get(r.outlet.name);
      if (prev && prev.text === text && now - prev.at < STATE_BEAT_MS) continue;
      last.set(r.outlet.name, { text, at: now });
      writeState(root, { outlet: r.outlet.name, pid: process.pid, updated: now, delivered: r.ledger.size(), waiting: [...r.waiting.values()], ...(listen ? { listen } : {}) });
      writeCursor(root, r.outlet.name, r.cursor);
    }
  };
  writeStates();
  // Woken by a change in any scope directory (one inotify watch each, and one on the directory
  // that holds them for a scope made later); the poll is the safety net, and the next retry.
  const pollMs = opts.pollMs ?? 5000;
  const handled: Handled = new Map();
  let kick: (() => void) | null = null;
  let wake: Wake | undefined;
  let watched = '';
  const arm = () => {
    const dirs = [signalsDir(root), ...listScopes(root).map((sc) => scopeDir(root, sc))];
    const key = dirs.join('\n');
    if (key === watched) return;
    wake?.close();
    watched = key;
    wake = wakeOnChange(dirs, () => kick?.());
  };
  try {
    while (!opts.signal.aborted) {
      arm();
      await cycle(ctx, me.id, runs, handled, opts.log);
      writeStates();
      const retry = Math.min(...runs.flatMap((r) => [...r.waiting.values()].map((w) => w.next))) - Date.now();
      await new Promise<void>((resolve) => {
        kick = resolve;
        void sleep(Math.max(10, Math.min(pollMs, retry)), opts.signal).then(resolve);
      });
      kick = null;
    }
  } finally {
    wake?.close();
    await server?.close();
    for (const r of runs) r.ledger.close();
    try {
      unlinkSync(lockFile(root));
    } catch {
      // Gone already.
    }
  }
}

/** Ids of the grace window a cycle has done with, and their times (to forget them once below it). */
type Handled = Map<string, number>;

async function cycle(ctx: VerbCtx, me: string, runs: OutletRun[], handled: Handled, log: (l: string) => void): Promise<void> {
  const started = Date.now();
  const floor = Math.min(...runs.map((r) => r.cursor)) - LEDGER_GRACE_MS;
  for (const [id, t] of handled) if (t < floor) handled.delete(id);
  const found: { m: Message; why: Notice['why'] }[] = [];
  // What this cycle read: done with after it unless it waits for an outlet.
  const read = new Map<string, number>();
  try {
    const held: { m: Message; why: Notice['why'] }[] = [];
    scanInbox(
      ctx,
      (m) => {
        if (m.time < floor) return false;
        read.set(m.id, m.time);
        const why = forPerson(m, me);
        if (why) found.push({ m, why });
        return true;
      },
      // A message the gate holds back (a bad signature, refused by policy) is told as a
      // notice: who, why, and where to look; never its body (it was not shown to anyone).
      (m, reason) => {
        if (m.time >= floor) read.set(m.id, m.time);
        if (forPerson(m, me) !== null) held.push({ m: { ...m, body: `(held: ${reason}; attend inbox --held shows it)` }, why: 'held' });
      },
      (k) => (k.time < floor ? 'stop' : handled.has(k.id) ? 'skip' : 'read'),
    );
    // Held ones take their place among the rest (newest first, as the walk went).
    for (const h of held) if (h.m.time >= floor) found.push(h);
    found.sort((a, b) => (a.m.time !== b.m.time ? b.m.time - a.m.time : a.m.id < b.m.id ? 1 : -1));
  } catch (e) {
    log(`attend adapter: reading the inbox failed: ${(e as Error).message}`);
    return;
  }
  found.reverse();
  if (found.length === 0 && runs.every((r) => r.waiting.size === 0)) {
    for (const r of runs) advance(r, found, started);
  } else {
    const root = ctx.root();
    const names = nameLookup(listLive({ root, sessionsDir: ctx.paths.sessionsDir, now: started, procInfo: ctx.procInfo }), me, readKnownNames(root));
    await Promise.all(runs.map((r) => deliver(r, found, started, names, log)));
  }
  // Each message is sent once: what is in every outlet's ledger (or is for none) is not read
  // again; what waits for one is, so its cursor stays behind it.
  for (const [id, t] of read) if (!runs.some((r) => r.waiting.has(id))) handled.set(id, t);
}

async function deliver(r: OutletRun, found: { m: Message; why: Notice['why'] }[], started: number, names: NameLookup, log: (l: string) => void): Promise<void> {
  let blocked: { id: string; error: string } | null = null;
  for (const { m, why } of found) {
    if (m.time < r.outlet.since || r.ledger.has(m.id)) continue;
    const now = Date.now();
    const w = r.waiting.get(m.id);
    if (blocked !== null) {
      r.waiting.set(m.id, { id: m.id, attempts: w?.attempts ?? 0, next: w?.next ?? now, error: `behind ${blocked.id} (${blocked.error})`, since: w?.since ?? now });
      continue;
    }
    if (w && w.next > now) {
      blocked = { id: m.id, error: w.error };
      continue;
    }
    try {
      // Recorded as in flight first: after a crash, its repeat is marked as one that may repeat.
      const mayRepeat = r.ledger.begin(m.id);
      const sent = await send(r.outlet, noticeOf(m, why, names), now, { mayRepeat, ...(r.sign ? { sign: r.sign } : {}) });
      r.ledger.record(m.id, sent.ref);
      r.waiting.delete(m.id);
    } catch (e) {
      if (e instanceof OutletError && e.sure) r.ledger.abandon(m.id);
      const error = e instanceof OutletError ? e.message : `failed: ${(e as Error).message}`;
      const attempts = (w?.attempts ?? 0) + 1;
      r.waiting.set(m.id, { id: m.id, attempts, next: Date.now() + backoff(attempts), error, since: w?.since ?? now });
      if (attempts === 1) log(`attend adapter: ${r.outlet.name}: ${m.id} waits: ${error}`);
      blocked = { id: m.id, error };
    }
  }
  advance(r, found, started);
}

/** Move an outlet's cursor up to the walk's start, never past a message that waits for it. */
function advance(r: OutletRun, found: { m: Message }[], started: number): void {
  for (const id of [...r.waiting.keys()]) if (r.ledger.has(id)) r.waiting.delete(id);
  const oldestWaiting = Math.min(...[...r.waiting.keys()].map((id) => found.find((f) => f.m.id === id)?.m.time ?? started));
  // Kept in memory, and written with the state (a cursor behind only means a longer walk).
  r.cursor = Math.min(started, oldestWaiting);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A reply from an outlet, checked, written as the person's threaded, signed reply. */
function writeReply(opts: AdapterRunOptions, r: OutletRun, re: string | undefined, text: string): { id: string; re: string } {
  const parent = re ?? r.ledger.newest();
  if (parent === undefined || !isMessageId(parent) || !r.ledger.has(parent)) throw new HttpRefusal(404, 'that message was not sent to this outlet');
  if (text.trim().length === 0) throw new HttpRefusal(400, 'the reply is empty');
  const sent = runReply(opts.makeCtx(), { message: text, re: parent });
  return { id: sent.id, re: parent };
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function inbound(runs: OutletRun[], opts: AdapterRunOptions): Promise<FastifyInstance> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ bodyLimit: 64 * 1024, logger: false });
  // Signatures are over the exact bytes: the body reaches the handlers as the string it came as.
  app.addContentTypeParser(['application/json', 'application/x-www-form-urlencoded'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
  const find = (name: string, kind: Outlet['kind']) => runs.find((r) => r.outlet.name === name && r.outlet.kind === kind);
  const header = (req: FastifyRequest, h: string) => {
    const v = req.headers[h];
    return typeof v === 'string' ? v : undefined;
  };
  const answer = (res: FastifyReply, e: unknown) => {
    if (e instanceof HttpRefusal) return res.code(e.status).send({ error: e.message });
    if (e instanceof AttendError) return res.code(422).send({ error: e.message });
    opts.log(`attend adapter: a reply failed: ${(e as Error).message}`);
    return res.code(500).send({ error: 'the reply could not be written' });
  };
  const raw = (req: FastifyRequest) => (typeof req.body === 'string' ? req.body : '');
  /** The raw body when its timestamp is fresh and its signature (HMAC of both) matches; else undefined. */
  const signedBody = (req: FastifyRequest, tsHeader: string, sigHeader: string, sign: (ts: string, body: string) => string): string | undefined => {
    const body = raw(req);
    const ts = header(req, tsHeader);
    const sig = header(req, sigHeader);
    return freshTimestamp(ts, Date.now()) && sig !== undefined && sameSecret(sig, sign(ts as string, body)) ? body : undefined;
  };

  app.post<{ Params: { outlet: string } }>('/in/:outlet', async (req, res) => {
    const r = find(req.params.outlet, 'webhook');
    if (!r || r.outlet.kind !== 'webhook') return res.code(404).send({ error: 'no such outlet' });
    const secret = r.outlet.secret;
    const body = signedBody(req, 'x-attend-timestamp', 'x-attend-signature', (ts, b) => webhookSignature(secret, ts, b));
    if (body === undefined) return res.code(401).send({ error: 'bad or missing signature' });
    try {
      const j = JSON.parse(body) as { re?: unknown; body?: unknown };
      if (typeof j.body !== 'string' || (j.re !== undefined && typeof j.re !== 'string')) throw new HttpRefusal(400, 'expected {"re": id, "body": text}');
      return res.send(writeReply(opts, r, j.re as string | undefined, j.body));
    } catch (e) {
      return answer(res, e instanceof SyntaxError ? new HttpRefusal(400, 'not JSON') : e);
    }
  });

  app.post<{ Params: { outlet: string } }>('/slack/:outlet', async (req, res) => {
    const r = find(req.params.outlet, 'slack');
    if (!r || r.outlet.kind !== 'slack') return res.code(404).send({ error: 'no such outlet' });
    const signingSecret = r.outlet.signingSecret;
    const body = signedBody(req, 'x-slack-request-timestamp', 'x-slack-signature', (ts, b) => slackSignature(signingSecret, ts, b));
    if (body === undefined) return res.code(401).send({ error: 'bad or missing signature' });
    // A slash command: `/attend <message id> <answer>`, or just the answer (to the newest).
    // Anyone in the workspace can run it: only the person's own member id speaks for them.
    const form = new URLSearchParams(body);
    if (form.get('user_id') !== r.outlet.userId) return res.code(403).send({ error: 'only the person this outlet is for can answer through it' });
    const text = form.get('text') ?? '';
    const m = /^\s*(\S+)\s+([\s\S]*)$/.exec(text);
    const [re, answerText] = m && isMessageId(m[1] as string) ? [m[1], m[2] as string] : [undefined, text];
    try {
      const w = writeReply(opts, r, re, answerText);
      return res.send({ response_type: 'ephemeral', text: `sent as ${w.id} (re ${w.re})` });
    } catch (e) {
      return answer(res, e);
    }
  });

  app.post<{ Params: { outlet: string } }>('/telegram/:outlet', async (req, res) => {
    const r = find(req.params.outlet, 'telegram');
    if (!r || r.outlet.kind !== 'telegram') return res.code(404).send({ error: 'no such outlet' });
    const token = header(req, 'x-telegram-bot-api-secret-token');
    if (token === undefined || !sameSecret(token, r.outlet.secretToken)) return res.code(401).send({ error: 'bad or missing secret token' });
    let u: { message?: { text?: unknown; chat?: { id?: unknown }; reply_to_message?: { message_id?: unknown } } };
    try {
      u = JSON.parse(raw(req)) as typeof u;
    } catch {
      return res.code(400).send({ error: 'not JSON' });
    }
    const msg = u.message;
    // Only the person's chat speaks for the person; any other update is acknowledged and dropped.
    if (!msg || String(msg.chat?.id) !== r.outlet.chatId || typeof msg.text !== 'string') return res.send({ ok: true, ignored: true });
    const ref = msg.reply_to_message?.message_id;
    const re = ref !== undefined ? r.ledger.byRef(String(ref)) : undefined;
    if (ref !== undefined && re === undefined) return res.code(404).send({ error: 'that message was not sent to this outlet' });
    try {
      return res.send({ ok: true, ...writeReply(opts, r, re, msg.text) });
    } catch (e) {
      return answer(res, e);
    }
  });
  return app;
}
