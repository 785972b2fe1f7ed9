// attend web's server in process (tools/web/server.ts) on a temporary bus, over real HTTP on
// 127.0.0.1: the login token's single use and lifetime on a stepped clock, the checks on every
// state-changing request, no CORS, and every pushed event valid against the shared schema.

import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { LOGIN_TTL_MS, isLoopback, startWebServer, type WebServer } from '../../tools/web/server.js';
import { SendRequest, WebEvent } from '../../tools/web/schema.js';
import { runSend } from '../../tools/verbs/send.js';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { type RawResponse, rawRequest } from '../helpers/http.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
let server: WebServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const clock = { now: Date.now() };
const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, now: () => clock.now, identity: 'human', userName: 'tester' });
const start = async () => (server = await startWebServer({ makeCtx, host: '127.0.0.1', port: 0, now: () => clock.now, pageScript: '/* page */', pid: process.pid }));

const cookiesOf = (r: RawResponse) => ((r.headers['set-cookie'] as string[] | undefined) ?? []).map((c) => c.split(';')[0]).join('; ');

describe('attend web server', () => {
  it('tells loopback from other addresses', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', 'localhost'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '192.168.1.2', '::', 'example.com'].some(isLoopback)).toBe(false);
  });

  it('a login token works once, and not after its lifetime', async () => {
    const s = await start();
    const first = await rawRequest(s.loginUrl);
    expect(first.status).toBe(302);
    expect(String(first.headers['set-cookie'])).toMatch(/attend_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
    expect((await rawRequest(s.loginUrl)).status).toBe(403);
    expect((await rawRequest(`${s.origin}/login`)).status).toBe(403);
    await s.close();
    const t = await start();
    clock.now += LOGIN_TTL_MS + 1;
    expect((await rawRequest(t.loginUrl)).status).toBe(403);
  });

  it('checks Host, Origin, cookie and CSRF token; sends no CORS header', async () => {
    const s = await start();
    const cookie = cookiesOf(await rawRequest(s.loginUrl));
    const session = await rawRequest(`${s.origin}/api/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(session.headers['access-control-allow-origin']).toBeUndefined();
    const csrf = (JSON.parse(session.body) as { csrf: string }).csrf;
    const both = `${cookie}; ${cookiesOf(session)}`;
    const send = (headers: Record<string, string>, body: unknown = { body: 'from the web' }) =>
      rawRequest(`${s.origin}/api/send`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    expect((await send({ cookie: both, origin: s.origin })).status).toBe(403);
    expect((await send({ cookie: both, origin: 'http://127.0.0.1:1', 'csrf-token': csrf })).status).toBe(403);
    expect((await send({ origin: s.origin, 'csrf-token': csrf })).status).toBe(401);
    expect((await send({ cookie: both, origin: s.origin, 'csrf-token': csrf, host: 'rebound.example' })).status).toBe(421);
    expect((await send({ cookie: both, origin: s.origin, 'csrf-token': csrf }, { body: '' })).status).toBe(400);
    const ok = await send({ cookie: both, origin: s.origin, 'csrf-token': csrf });
    expect(ok.status, ok.body).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
    // An OPTIONS preflight gets no CORS answer either.
    const pre = await rawRequest(`${s.origin}/api/send`, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('pushes history, then arrivals, each event valid against the shared schema', async () => {
    runSend(makeCtx(), { message: 'before' });
    const s = await start();
    const cookie = cookiesOf(await rawRequest(s.loginUrl));
    const events: WebEvent[] = [];
    const req = request(`${s.origin}/api/events`, { headers: { cookie } }, (res) => {
      let buf = '';
      res.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          events.push(WebEvent.parse(JSON.parse(frame.replace(/^data: /, ''))));
        }
      });
    });
    req.end();
    try {
      await waitFor(() => events.some((e) => e.type === 'history'), { what: 'history' });
      const history = events.find((e) => e.type === 'history');
      expect(history?.type === 'history' && history.messages.map((m) => m.body)).toEqual(['before']);
      runSend(makeCtx(), { message: 'after \x1b[2J' });
      const arrived = await waitFor(() => events.find((e) => e.type === 'arrived'), { what: 'an arrival' });
      expect(arrived.type === 'arrived' && arrived.messages[0]?.body).toBe('after \u241b[2J');
      expect(arrived.type === 'arrived' && arrived.messages[0]?.header).toMatch(/^\[attend message from_kind=human from=tester sig=ok to=\* id=/);
    } finally {
      req.destroy();
    }
  });

  it('the request schema refuses what it does not know', () => {
    expect(SendRequest.safeParse({ body: 'x', to: ['a'] }).success).toBe(true);
    expect(SendRequest.safeParse({ body: 'x', html: '<b>' }).success).toBe(false);
    expect(SendRequest.safeParse({ body: '' }).success).toBe(false);
  });
});
