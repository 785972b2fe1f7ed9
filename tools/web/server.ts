// `attend web`'s server (issue 24 §1, §2): Fastify on a loopback address, the person's own
// front end over the same pieces as `attend chat`: the chat's bus source (history and live
// arrivals through the gate), its actions (sends through runSend/runReply), its presence and
// its roster poller. Nothing here reads or writes the bus another way.
//
// Security: a one-time login URL (a single-use token, valid LOGIN_TTL_MS) becomes an HttpOnly,
// SameSite=Strict, signed session cookie; every request must name this server as its Host
// (no DNS rebinding), every state-changing request must come from this server's Origin and
// carry a CSRF token (@fastify/csrf-protection); no CORS headers are ever sent. Every event
// and request body goes through tools/web/schema.ts, the schema the page uses too.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { type Message, wakeOnChange } from '../bus/store/index.js';
import { type Peer, presenceDir } from '../bus/presence/index.js';
import { pidRuns } from '../identity/system.js';
import { createChatActions } from '../chat/actions.js';
import { createBusSource } from '../chat/bus-source.js';
import { peerStatus } from '../chat/peer-status.js';
import { createChatPresence } from '../chat/source/heartbeat.js';
import { createRosterPoller } from '../chat/source/roster.js';
import { realTimers } from '../chat/source/timers.js';
import type { VerbCtx } from '../verbs/context.js';
import { runSend } from '../verbs/send.js';
import { addresseeLabel, lastSeen, nameLookup, partyLabel, reachText, scopeName } from '../wire/display.js';
import { errorLine } from '../chat/hints.js';
import { messageHeader, neutralize } from '../wire/render.js';
import { createHeldWatch, runThread } from '../verbs/inbox.js';
import { runSent } from '../verbs/delivery.js';
import { runAllow, runDeny, runGrants } from '../verbs/trust/grants.js';
import { runTree } from '../verbs/trust/lineage.js';
import { runPolicy } from '../verbs/trust/policy.js';
import { removeServerRecord, takeLogin, writeServerRecord } from './logins.js';
import { BOOT_ELEMENT, ErrorResponse, GrantRequest, OwnerView, PageBoot, PolicyRequest, SendRequest, SendResponse, SessionResponse, ThreadResponse, type TreeNode, WebEvent, type WebMessage, type WebPeer } from './schema.js';

/** How long the printed login URL works, once. */
export const LOGIN_TTL_MS = 120_000;
/** Messages kept in memory for a page that opens: the newest, like the chat's first load. */
const KEEP = 500;
const SESSION_COOKIE = 'attend_session';
/** Messages a page that opens is sent first. */
const FIRST_SHOWN = 100;
/** Arrivals are pushed at most this often, ms. */
const WEB_BATCH_MS = 20;
/** How often the roster is read again when no session started or ended (see readPeers). */
const ROSTER_FULL_MS = 30_000;
const ROSTER_PIDS_MS = 5_000;

export interface WebOptions {
  /** A fresh context for each operation, always the human identity (as the chat's). */
  makeCtx(): VerbCtx;
  host: string;
  /** 0: a free port. */
  port: number;
  tls?: { key: string; cert: string };
  now(): number;
  /** The bundled page (dist/web/app.js). */
  pageScript: string;
  pid: number;
}

export interface WebServer {
  origin: string;
  /** The one-time login URL printed at start. */
  loginUrl: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const token = () => randomBytes(32).toString('base64url');

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// The boot data is JSON inside a script element: every `<` is written as \u003c, so no text
// from the bus can close the element or open another (JSON.parse reads it back the same).
const PAGE = (nonce: string, boot: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>attend</title>
<style nonce="${nonce}">
body{margin:0;font:14px/1.4 system-ui,sans-serif;background:#fafafa;color:#111}
.app{display:flex;flex-direction:column;height:100vh}
header{display:flex;gap:.5em;align-items:center;padding:.4em .6em;background:#222;color:#eee;flex-wrap:wrap}
header button{background:#444;color:#eee;border:1px solid #666;border-radius:3px;padding:.2em .6em}
header button[aria-pressed=true]{background:#eee;color:#111}
.main{display:flex;flex:1;min-height:0}
.feed{flex:1;overflow:auto;padding:.5em;min-width:0}
.roster{width:16em;overflow:auto;border-left:1px solid #ccc;padding:.5em;background:#f0f0f0}
.msg{margin:.3em 0;padding:.3em .5em;background:#fff;border:1px solid #ddd;border-radius:4px;content-visibility:auto;contain-intrinsic-size:auto 4.5em}
.msg:focus{outline:2px solid #36c}
.msg .hdr{font:11px/1.3 ui-monospace,monospace;color:#666;word-break:break-all}
.msg .meta{font-size:12px;color:#333}
.msg .body{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace}
.sig-none{color:#a60}.sig-ok{color:#070}
form.compose{display:flex;gap:.4em;padding:.4em;border-top:1px solid #ccc;flex-wrap:wrap}
form.compose textarea{flex:1;min-width:10em;font:inherit}
.status{font-size:12px;padding:.2em .6em;color:#333}
.status.error{color:#b00}
.machine{font-weight:bold;margin-top:.5em}
.peer{font-size:13px}
.gone{color:#888}
.owner h2{font-size:15px;margin:.8em 0 .3em}
.held .reason{color:#b00;font-size:12px}
.sent .shown{font-size:12px;color:#333;margin:0 0 .6em .5em}
ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:1.2em;border-left:1px solid #999}
ul.tree li{position:relative;padding:.1em 0 .1em .6em}
ul.tree li::before{content:'';position:absolute;left:0;top:.8em;width:.5em;border-top:1px solid #999}
form.grant,form.policy{display:flex;gap:.4em;flex-wrap:wrap;align-items:center;margin:.3em 0}
button:focus,select:focus,input:focus,textarea:focus{outline:2px solid #36c}
@media (max-width:640px){.main{flex-direction:column}.roster{width:auto;border-left:0;border-top:1px solid #ccc;max-height:30vh}}
</style></head>
<body><div id="root"></div><script type="application/json" id="${BOOT_ELEMENT}" nonce="${nonce}">${boot.replace(/</g, '\\u003c')}</script><script nonce="${nonce}" src="/app.js"></script></body></html>`;

export async function startWebServer(opts: WebOptions): Promise<WebServer> {
  const base = opts.makeCtx();
  const me = base.identity();
  const root = base.root();
  const scheme = opts.tls ? 'https' : 'http';
  const app = Fastify({
    logger: false,
    // An open event stream (or a browser's reconnect to one) must not hold the close up.
    forceCloseConnections: true,
    bodyLimit: 128 * 1024,
    ...(opts.tls ? { https: { key: readFileSync(opts.tls.key), cert: readFileSync(opts.tls.cert) } } : {}),
  });
  await app.register(fastifyCookie, { secret: token() });
  await app.register(fastifyCsrf, { cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, signed: true, secure: !!opts.tls } });

  let closed = false;
  const logins = new Map<string, number>(); // token -> expiry (ms)
  const sessions = new Set<string>();
  let origin = '';
  let hostHeader = '';

  // ── the bus, through the chat's pieces ──
  // A browser draws an arrival in well under a frame, so arrivals are not held back as long
  // as the chat's terminal frames need (ARRIVAL_BATCH_MS): a message is on the page sooner.
  const source = createBusSource({ root, reader: me, batchMs: WEB_BATCH_MS });
  const actions = createChatActions({ makeCtx: opts.makeCtx, root, now: opts.now });
  const presence = createChatPresence({ root, me, pid: opts.pid, now: opts.now, timers: realTimers, role: 'web' });
  const thisHost = hostname();
  let livePeers: Peer[] = [];
  const seen = new Map<string, Peer>(); // every party seen live since start, for `gone`
  const names = () => nameLookup(livePeers, me.id, source.knownNames?.());

  function toWeb(m: Message): WebMessage {
    const n = names();
    const kind = m.scope.kind === 'open' ? 'open' : m.scope.kind === 'channel' ? 'channel' : 'direct';
    return {
      id: m.id,
      header: messageHeader(m, m.id),
      from: m.fromId,
      fromName: neutralize(partyLabel(m.fromId, n)),
      fromKind: m.fromKind,
      toLabel: neutralize(addresseeLabel(m, n)),
      scope: neutralize(scopeName(m.scope)),
      kind,
      ...(m.scope.kind === 'channel' ? { channel: neutralize(m.scope.name) } : {}),
      time: m.time,
      body: neutralize(m.body, { multiline: true }),
      ...(m.re !== undefined ? { re: m.re } : {}),
      ...(m.sig !== undefined ? { sig: m.sig } : {}),
      ...(m.urgency === 'urgent' ? { urgent: true } : {}),
    };
  }

  let recent: WebMessage[] = []; // oldest first
  let hasOlder = false;
  let status: string | null = null;
  let roster: { peers: WebPeer[]; channels: string[] } = { peers: [], channels: [] };
  const clients = new Set<ServerResponse>();

  function send(res: ServerResponse, ev: WebEvent): void {
    res.write(`data: ${JSON.stringify(WebEvent.parse(ev))}\n\n`);
  }
  function broadcast(ev: WebEvent): void {
    const line = `data: ${JSON.stringify(WebEvent.parse(ev))}\n\n`;
    for (const c of clients) c.write(line);
  }

  function rosterOf(peers: Peer[], channels: string[]): typeof roster {
    const now = opts.now();
    const live = new Set(peers.map((p) => p.id));
    for (const p of peers) seen.set(p.id, p);
    const out: WebPeer[] = [];
    for (const p of [...peers, ...[...seen.values()].filter((p) => !live.has(p.id))]) {
      const gone = !live.has(p.id);
      const s = gone ? null : peerStatus(p, now);
      out.push({
        id: p.id,
        name: neutralize(p.name),
        kind: p.kind,
        host: neutralize(p.host ?? thisHost),
        status: gone ? 'gone' : s!.status,
        reach: gone ? lastSeen(p.lastSeen, now) : reachText(s!.reach, now),
        lastSeen: p.lastSeen,
        gone,
      });
    }
    out.sort((a, b) => a.host.localeCompare(b.host) || Number(a.gone) - Number(b.gone) || a.name.localeCompare(b.name));
    return { peers: out, channels };
  }

  let lastRoster = '';
  let pendingPeers: Peer[] = [];
  let channelDirsKey: string | null = null;
  // What the last roster was made of: the same peers (readPeers keeps its array until it reads
  // again) and the same channels make the same roster, so nothing is recomputed.
  let rosterInputs: { peers: Peer[] | null; channels: string } = { peers: null, channels: '' };
  // The roster costs ~0.1 ms a session to read (its record, its process, its presence, the
  // registry and the names): read every second it would keep a server with 100 live sessions
  // above 1 % of a core at rest (docs/benchmarks.md, "attend web"). So the second's look is a
  // mark of what changes it — the session records' names and change times (a session that
  // starts, ends, or turns busy or idle) and the names in the presence directory (a conduit
  // that starts or stops), each taken again only after an inotify event in its directory
  // (wakeOnChange) — with, every ROSTER_PIDS_MS, whether each live session's process still
  // runs (signal 0: one that died leaving its record; the full read checks its start time);
  // the roster is read again when the mark moved, and at least every ROSTER_FULL_MS (a
  // heartbeat gone stale, a focus that ended, an event the platform never gave).
  const sessionsDir = opts.makeCtx().paths.sessionsDir;
  const beatsDir = presenceDir(root);
  const names_ = (dir: string) => {
    try {
      return readdirSync(dir).sort();
    } catch {
      return [];
    }
  };
  const recordsMark = () => {
    const parts: string[] = [];
    for (const n of names_(sessionsDir)) {
      try {
        parts.push(`${n}@${statSync(join(sessionsDir, n)).mtimeMs}`);
      } catch {
        // gone between the listing and the stat: the next look has it
      }
    }
    return parts.join('/');
  };
  const dirty = { records: true, beats: true };
  const wakes = [wakeOnChange([sessionsDir], () => (dirty.records = true)), wakeOnChange([beatsDir], () => (dirty.beats = true))];
  const mark = { records: '', beats: '' };
  const dirMark = (full: boolean) => {
    if (dirty.records || full) {
      dirty.records = false;
      mark.records = recordsMark();
    }
    if (dirty.beats || full) {
      dirty.beats = false;
      mark.beats = names_(beatsDir).join('/');
    }
    return `${mark.records}|${mark.beats}`;
  };
  const anyDied = (peers: readonly Peer[]) => peers.some((p) => p.record?.pid !== undefined && !pidRuns(p.record.pid));
  let rosterRead = { at: -Infinity, pids: -Infinity, mark: '', peers: [] as Peer[] };
  const readPeers = (): Peer[] => {
    const at = Date.now();
    const full = at - rosterRead.at >= ROSTER_FULL_MS;
    const mark = dirMark(full);
    let stale = mark !== rosterRead.mark || full;
    if (!stale && at - rosterRead.pids >= ROSTER_PIDS_MS) {
      rosterRead.pids = at;
      stale = anyDied(rosterRead.peers);
    }
    if (stale) rosterRead = { at, pids: at, mark, peers: actions.peers() };
    return rosterRead.peers;
  };
  const poller = createRosterPoller({
    read: { peers: readPeers, channels: () => actions.channels() },
    timers: realTimers,
    everyMs: 1000,
    peers(p) {
      pendingPeers = p;
      livePeers = p;
    },
    channels(cs) {
      const names = cs.map((c) => c.name);
      const inputs = { peers: pendingPeers, channels: names.join('\0') };
      if (inputs.peers === rosterInputs.peers && inputs.channels === rosterInputs.channels) return;
      rosterInputs = inputs;
      const next = rosterOf(pendingPeers, names);
      // Status words carry no clock, so an unchanged roster is not pushed again.
      const key = JSON.stringify(next.peers.map((p) => [p.id, p.status, p.gone, p.host])) + JSON.stringify(next.channels);
      roster = next;
      if (key === lastRoster) return;
      lastRoster = key;
      broadcast({ type: 'roster', ...roster });
    },
    failed(text) {
      status = text;
      broadcast({ type: 'status', text });
    },
  });

  // ── auth ──
  function authed(req: FastifyRequest): boolean {
    const raw = req.cookies[SESSION_COOKIE];
    if (!raw) return false;
    const u = req.unsignCookie(raw);
    return u.valid && u.value !== null && sessions.has(u.value);
  }
  function refuse(reply: FastifyReply, code: number, error: string) {
    return reply.code(code).type('application/json').send(ErrorResponse.parse({ error }));
  }

  app.addHook('onRequest', async (req, reply) => {
    // A page of another site that resolves a name to 127.0.0.1 (DNS rebinding) sends its own name.
    if (req.headers.host !== hostHeader) return refuse(reply, 421, 'wrong host');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (req.headers.origin !== origin) return refuse(reply, 403, 'cross-origin request refused');
      if (!authed(req)) return refuse(reply, 401, 'not logged in');
    }
    return undefined;
  });
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
  });

  app.get('/login', async (req, reply) => {
    const t = (req.query as { token?: unknown }).token;
    const now = opts.now();
    let ok = false;
    if (typeof t === 'string') {
      for (const [k, exp] of logins) {
        if (exp < now) logins.delete(k);
        else if (sameString(k, t)) {
          logins.delete(k); // single use
          ok = true;
        }
      }
    }
    // A login minted by `attend web --login` while this server runs (tools/web/logins.ts).
    if (!ok && typeof t === 'string') ok = takeLogin(root, t, now);
    if (!ok) return refuse(reply, 403, 'this login link was used already or has expired; run attend web --login for a new one');
    const sid = token();
    sessions.add(sid);
    reply.setCookie(SESSION_COOKIE, sid, { path: '/', httpOnly: true, sameSite: 'strict', signed: true, secure: !!opts.tls });
    return reply.redirect('/');
  });

  app.get('/', async (req, reply) => {
    if (!authed(req)) return reply.code(401).type('text/plain').send('not logged in: open the one-time URL that attend web printed');
    const nonce = randomBytes(16).toString('base64');
    reply.header(
      'content-security-policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    );
    const session = sessionOf(reply);
    reply.header('cache-control', 'no-store');
    return reply.type('text/html; charset=utf-8').send(PAGE(nonce, JSON.stringify(PageBoot.parse({ session, events: firstEvents() }))));
  });

  app.get('/app.js', async (req, reply) => {
    if (!authed(req)) return refuse(reply, 401, 'not logged in');
    return reply.type('text/javascript; charset=utf-8').send(opts.pageScript);
  });

  app.get('/api/session', async (req, reply) => {
    if (!authed(req)) return refuse(reply, 401, 'not logged in');
    return sessionOf(reply);
  });

  const meName = () => neutralize(names().name(me.id));
  const sessionOf = (reply: FastifyReply) => SessionResponse.parse({ me: me.id, meName: meName(), csrf: reply.generateCsrf() });
  // What a new stream begins with, and what the page is served with (PageBoot). A page that
  // opens gets a few screens of the newest, not all the server keeps: its first paint
  // validates and draws each one (scripts/bench/web.mjs).
  const firstEvents = (): WebEvent[] => [
    { type: 'hello', me: me.id, meName: meName() },
    { type: 'history', messages: recent.slice(-FIRST_SHOWN), hasOlder: hasOlder || recent.length > FIRST_SHOWN },
    { type: 'roster', ...roster },
    { type: 'status', text: status },
  ];

  app.get('/api/events', (req, reply) => {
    if (!authed(req)) {
      void refuse(reply, 401, 'not logged in');
      return;
    }
    if (closed) {
      void refuse(reply, 503, 'attend web is stopping');
      return;
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    for (const ev of firstEvents()) send(res, ev);
    clients.add(res);
    req.raw.on('close', () => clients.delete(res));
  });

  app.post('/api/send', { onRequest: app.csrfProtection }, async (req, reply) => {
    const parsed = SendRequest.safeParse(req.body);
    if (!parsed.success) return refuse(reply, 400, `bad request: ${parsed.error.issues[0]?.message ?? 'invalid body'}`);
    const b = parsed.data;
    try {
      // A reply through the chat's action; anything else through the send verb, which
      // resolves `to` names exactly as `attend send --to` does.
      const r = b.re !== undefined ? actions.reply(b.re, b.body) : runSend(opts.makeCtx(), { message: b.body, channel: b.channel, to: b.to });
      return SendResponse.parse({ id: r.id, to: r.to, notes: r.notes });
    } catch (err) {
      return refuse(reply, 422, errorLine(err));
    }
  });

  // The person's view: what the gate holds, what they sent and who saw it, the policy and the
  // lineage, read through the same verbs as `attend inbox --held`, `inbox --sent`, `grants`
  // and `peers --tree`. Read on request (the page asks again when something changes).
  /** message id \0 party → the conduit that showed it, as first seen (the oldest dropped past SHOWN_BY_MAX). */
  const shownBy = new Map<string, string>();
  const SHOWN_BY_MAX = 10_000;
  const HELD_MAX = 100;
  // What is held, read at the first look and then only what arrived since (inbox.ts createHeldWatch).
  const heldWatch = createHeldWatch();
  const SENT_MAX = 50;
  app.get('/api/owner', async (req, reply) => {
    if (!authed(req)) return refuse(reply, 401, 'not logged in');
    // Who is live is the roster the server keeps (read on change, above), not a read of every
    // session for each look: the page asks again at every arrival while this tab is open.
    const ctx: VerbCtx = { ...opts.makeCtx(), live: () => livePeers };
    const held = heldWatch
      .list(ctx, HELD_MAX)
      .map((m) => ({ ...toWeb(m), reason: neutralize(m.heldReason ?? 'held') }));
    const sent = runSent(ctx, { limit: SENT_MAX }).messages.map((r) => ({
      message: toWeb(r.message),
      recipients: r.recipients.map((x) => {
        // The conduit as first seen with the message shown: what delivers to them later may differ.
        const key = `${r.message.id}\0${x.id}`;
        if (x.shown && x.by !== undefined && !shownBy.has(key)) {
          shownBy.set(key, x.by);
          if (shownBy.size > SHOWN_BY_MAX) shownBy.delete(shownBy.keys().next().value!);
        }
        const by = x.shown ? shownBy.get(key) : undefined;
        return { id: x.id, name: neutralize(x.name), shown: x.shown, ...(by !== undefined ? { by: neutralize(by) } : {}) };
      }),
    }));
    let policy: OwnerView['policy'] = { mode: '?', open: '?', maxDepth: 0, allow: [], deny: [] };
    let policyError: string | undefined;
    try {
      const p = runGrants(ctx).policy;
      const g = (x: { from: string; to: string; channel?: string | undefined }) => ({ from: neutralize(x.from), to: neutralize(x.to), ...(x.channel !== undefined ? { channel: neutralize(x.channel) } : {}) });
      policy = { mode: p.mode, open: p.open, maxDepth: p.maxDepth, ...(p.claims !== undefined ? { claims: p.claims } : {}), allow: p.allow.map(g), deny: p.deny.map(g) };
    } catch (err) {
      policyError = errorLine(err);
    }
    const t = runTree(ctx);
    const liveIds = new Set(t.live.map((p) => p.id));
    const n = names();
    const named = (x: { id: string; children: { id: string; children: unknown[] }[] }): TreeNode => ({
      id: x.id,
      name: neutralize(n.name(x.id)),
      live: liveIds.has(x.id),
      children: (x.children as { id: string; children: { id: string; children: unknown[] }[] }[]).map(named),
    });
    return OwnerView.parse({ held, sent, policy, ...(policyError !== undefined ? { policyError } : {}), tree: t.tree.map(named) });
  });

  app.get('/api/thread', async (req, reply) => {
    if (!authed(req)) return refuse(reply, 401, 'not logged in');
    const id = (req.query as { id?: unknown }).id;
    if (typeof id !== 'string' || id.length === 0 || id.length > 200) return refuse(reply, 400, 'bad request: id');
    try {
      return ThreadResponse.parse({ messages: runThread(opts.makeCtx(), id).map(toWeb) });
    } catch (err) {
      return refuse(reply, 404, errorLine(err));
    }
  });

  // Changes to the policy go through the verbs, which refuse anyone but the owner (exit 4).
  app.post('/api/grant', { onRequest: app.csrfProtection }, async (req, reply) => {
    const parsed = GrantRequest.safeParse(req.body);
    if (!parsed.success) return refuse(reply, 400, `bad request: ${parsed.error.issues[0]?.message ?? 'invalid body'}`);
    const { verb, ...input } = parsed.data;
    try {
      const r = (verb === 'allow' ? runAllow : runDeny)(opts.makeCtx(), input);
      return { ok: true, from: r.from, to: r.to };
    } catch (err) {
      return refuse(reply, 422, errorLine(err));
    }
  });
  app.post('/api/policy', { onRequest: app.csrfProtection }, async (req, reply) => {
    const parsed = PolicyRequest.safeParse(req.body);
    if (!parsed.success) return refuse(reply, 400, `bad request: ${parsed.error.issues[0]?.message ?? 'invalid body'}`);
    try {
      const r = runPolicy(opts.makeCtx(), parsed.data);
      return { ok: true, mode: r.policy.mode, open: r.policy.open };
    } catch (err) {
      return refuse(reply, 422, errorLine(err));
    }
  });

  // ── start ──
  const first = source.loadInitial(KEEP);
  recent = first.messages.map(toWeb).reverse();
  hasOlder = first.hasOlder;
  source.start({
    arrived(ms) {
      const web = ms.map(toWeb);
      recent = [...recent, ...web].slice(-KEEP);
      hasOlder ||= recent.length >= KEEP;
      broadcast({ type: 'arrived', messages: web });
    },
    status(text) {
      status = text;
      broadcast({ type: 'status', text });
    },
    // Said after every rescan (each second): the roster is read again only when a channel
    // directory came or went, the poller reading it on its own second anyway.
    channels(names) {
      const key = names.join('\0');
      if (key === channelDirsKey) return;
      channelDirsKey = key;
      poller.refresh();
    },
  });
  presence.start();
  poller.start();

  await app.listen({ host: opts.host, port: opts.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const hostPart = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  hostHeader = `${hostPart}:${port}`;
  origin = `${scheme}://${hostHeader}`;
  const login = token();
  logins.set(login, opts.now() + LOGIN_TTL_MS);
  writeServerRecord(root, opts.pid, origin);

  return {
    origin,
    loginUrl: `${origin}/login?token=${login}`,
    async close() {
      if (closed) return;
      closed = true;
      removeServerRecord(root, opts.pid);
      poller.stop();
      for (const w of wakes) w.close();
      source.stop();
      presence.stop();
      for (const c of clients) c.end();
      clients.clear();
      await app.close();
    },
  };
}
