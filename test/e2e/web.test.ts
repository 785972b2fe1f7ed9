// attend web in a real browser (issue 24 §5): Debian's Chromium, headless, driven by
// puppeteer-core, against the built `attend web` as a real process on a temporary bus.
// CI installs chromium through .ci/run.

import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { attendKey } from '../../tools/wire/names.js';
import { ids } from '../helpers/delivery.js';
import { BIN, ME, type FakeSession, fakeSession, makeTempBus, runBin, type TempBus, waitFor } from '../helpers/bus.js';
import { rawRequest } from '../helpers/http.js';

// The callbacks below run in the page; the test's own types have no DOM (tsconfig lib), so
// they see elements through this much of one.
interface El {
  textContent: string | null;
  getAttribute(name: string): string | null;
}
const textOf = (el: unknown) => (el as El).textContent ?? '';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

let browser: Browser;
let bus: TempBus;
let nick: FakeSession;
let web: ChildProcess;
let out: string;
let page: Page;

beforeAll(async () => {
  // --no-sandbox: CI runs as root, where Chromium's own sandbox will not start.
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
});
afterAll(async () => {
  await browser?.close();
});

async function startWeb(): Promise<{ origin: string; login: string }> {
  out = '';
  web = spawn(process.execPath, [BIN, 'web'], { env: bus.env, cwd: bus.home, stdio: ['ignore', 'pipe', 'pipe'] });
  web.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  web.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const login = await waitFor(() => /https?:\/\/127\.0\.0\.1:\d+\/login\?token=[\w-]+/.exec(out)?.[0], { what: `the login URL (output: ${out})`, timeoutMs: 15_000 });
  return { origin: new URL(login).origin, login };
}

beforeEach(async () => {
  bus = makeTempBus();
  nick = fakeSession(bus, { name: 'Nick' });
  page = await browser.newPage();
});
afterEach(async () => {
  await page?.close();
  if (web && web.exitCode === null) {
    const exited = new Promise((r) => web.once('exit', r));
    web.kill('SIGTERM');
    const stopped = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(r, 10_000, false))]);
    if (!stopped) {
      web.kill('SIGKILL');
      throw new Error(`attend web did not stop within 10 s of SIGTERM; output:\n${out}`);
    }
  }
  nick.kill();
  bus.cleanup();
});

const feedText = () => page.$eval('.feed', textOf);

describe('attend web', () => {
  it('logs in with the one-time URL, shows history, receives live, sends from the compose box', async () => {
    expect(runBin(['send', 'before the page opened'], { env: nick.env }).exitCode).toBe(0);
    const { login } = await startWeb();
    await page.goto(login);
    await waitFor(async () => (await feedText()).includes('before the page opened'), { what: 'history on the page' });
    // The same header as every other conduit, sig= included.
    const header = await page.$eval('.msg .hdr', textOf);
    expect(header).toMatch(/^\[attend message from_kind=agent from=\S+ sig=ok to=\* id=\S+\]$/);

    // Live, no reload: count navigations.
    let navigations = 0;
    page.on('framenavigated', () => navigations++);
    expect(runBin(['send', 'live from the cli'], { env: nick.env }).exitCode).toBe(0);
    await waitFor(async () => (await feedText()).includes('live from the cli'), { what: 'the live message' });
    expect(navigations).toBe(0);

    // The roster, by machine, with Nick live.
    await waitFor(async () => (await page.$eval('.roster', textOf)).includes('Nick'), { what: 'Nick in the roster' });

    // Compose: @Nick sends to Nick; Nick's inbox has it.
    await page.type('textarea[name=draft]', '@Nick hello from the browser');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await page.$eval('[role=status]', textOf).catch(() => '')).startsWith('sent to'), { what: 'the send result' });
    await waitFor(() => runBin(['inbox'], { env: nick.env }).stdout.includes('hello from the browser'), { what: "the message in Nick's inbox" });
    // And it comes back to the page live, as a direct message.
    await waitFor(async () => (await feedText()).includes('hello from the browser'), { what: 'the sent message on the page' });
  });

  it('replies to a message, threaded', async () => {
    const sent = runBin(['send', '--json', 'question from Nick'], { env: nick.env });
    expect(sent.exitCode).toBe(0);
    const id = JSON.parse(sent.stdout).id as string;
    const { login } = await startWeb();
    await page.goto(login);
    await waitFor(() => page.$(`.msg[data-id="${id}"] button.reply`), { what: 'the message' });
    await page.click(`.msg[data-id="${id}"] button.reply`);
    await page.type('textarea[name=draft]', 'the answer');
    await page.keyboard.press('Enter');
    await waitFor(() => {
      const r = runBin(['inbox', '--json'], { env: nick.env });
      const ms = (JSON.parse(r.stdout) as { messages: { body: string; re?: string }[] }).messages;
      return ms.some((m) => m.body === 'the answer' && m.re === id);
    }, { what: 'the threaded reply in Nick\'s inbox' });
  });

  it('renders a hostile body as text', async () => {
    const { login } = await startWeb();
    await page.goto(login);
    await waitFor(() => page.$('.roster'), { what: 'the page' });
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>\x1b[31mred\x1b]0;title\x07 <b>bold</b>';
    expect(runBin(['send', hostile], { env: nick.env }).exitCode).toBe(0);
    await waitFor(async () => (await feedText()).includes('<img src=x onerror='), { what: 'the hostile body as text' });
    const text = await feedText();
    expect(text).toContain('<script>window.__pwned=2</script>');
    expect(text).toContain('\u241b[31mred'); // the escape shown as ␛, not interpreted
    expect(text).not.toContain('\x1b');
    expect(await page.$$('.feed .body *, .feed img, .feed script')).toHaveLength(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('serves the history with the page, a hostile body in it as data: it cannot close the boot element or run', async () => {
    const hostile = '</script><script>window.__pwned=3</script><!-- \u2028 --> </SCRIPT ><img src=x onerror="window.__pwned=4">';
    expect(runBin(['send', hostile], { env: nick.env }).exitCode).toBe(0);
    const { login } = await startWeb();
    // The page's own HTML (the login's redirect followed in the browser): the body is inside
    // the one JSON element, every < escaped, so the document has exactly the two scripts it had.
    const served = await page.goto(login);
    const html = (await served?.text()) ?? '';
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).not.toMatch(/<img|<!--/i);
    expect(html).toContain('\\u003c/script>\\u003cscript>window.__pwned=3');
    await waitFor(async () => (await feedText()).includes('window.__pwned=3'), { what: 'the hostile history as text' });
    expect(await page.$$eval('script', (xs) => xs.map((x) => x.getAttribute('type') ?? x.getAttribute('src')))).toEqual(['application/json', '/app.js']);
    expect(await page.$$('.feed .body *, .feed img, .feed script')).toHaveLength(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await feedText()).toContain('</script><script>window.__pwned=3</script>');
  });

  it('refuses a used token, a missing cookie, a missing CSRF token and a foreign origin', async () => {
    const { origin, login } = await startWeb();
    await page.goto(login);
    await waitFor(() => page.$('.roster'), { what: 'the page' });
    // The token was used: a second use is refused, and makes no session.
    const again = await rawRequest(login, { headers: { host: new URL(origin).host } });
    expect(again.status).toBe(403);
    expect(again.headers['set-cookie']).toBeUndefined();
    // Without the cookie: nothing.
    expect((await rawRequest(`${origin}/api/events`, {})).status).toBe(401);
    expect((await rawRequest(`${origin}/`, {})).status).toBe(401);

    const cookies = (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const session = await rawRequest(`${origin}/api/session`, { headers: { cookie: cookies } });
    expect(session.status).toBe(200);
    expect(session.headers['access-control-allow-origin']).toBeUndefined();
    const csrf = JSON.parse(session.body).csrf as string;
    const post = (headers: Record<string, string>, body = JSON.stringify({ body: 'via raw http' })) =>
      rawRequest(`${origin}/api/send`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: cookies, ...headers }, body });
    expect((await post({ origin })).status).toBe(403); // no CSRF token
    expect((await post({ origin: 'http://evil.example', 'csrf-token': csrf })).status).toBe(403);
    expect((await post({ 'csrf-token': csrf })).status).toBe(403); // no Origin at all
    expect((await post({ origin, 'csrf-token': 'forged' })).status).toBe(403);
    expect((await post({ origin, 'csrf-token': csrf, host: 'attacker.example:80' })).status).toBe(421); // DNS rebinding
    expect((await post({ origin, 'csrf-token': csrf }, JSON.stringify({ body: 'x', extra: 1 }))).status).toBe(400); // the schema
    // From the page itself, without the token, the browser's request is refused too.
    const fromPage = await page.evaluate(async () => (await fetch('/api/send', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body: 'no token' }) })).status);
    expect(fromPage).toBe(403);
    // None of the refused ones reached the bus; the one with everything right did.
    expect(runBin(['inbox'], { env: nick.env }).stdout).not.toContain('via raw http');
    const ok = await post({ origin, 'csrf-token': csrf });
    expect(ok.status).toBe(200);
    await waitFor(() => runBin(['inbox'], { env: nick.env }).stdout.includes('via raw http'), { what: 'the accepted send on the bus' });
  });

  it('attend web --login prints a fresh one-time URL for the running server, for the person only', async () => {
    // A worker can write the bus root and its state/: a server record planted there (a live
    // pid, another origin) must not be where --login sends the person's next token.
    const oldWeb = join(bus.root, 'state', 'web');
    mkdirSync(join(oldWeb, 'logins'), { recursive: true });
    writeFileSync(join(oldWeb, 'server.json'), JSON.stringify({ pid: process.pid, start: '', origin: 'http://127.0.0.1:9' }));
    const none = runBin(['web', '--login'], { env: bus.env });
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('no attend web is running on this bus');
    const { origin, login } = await startWeb();
    await page.goto(login);
    await waitFor(() => page.$('.roster'), { what: 'the page' });
    // The first URL is used; a new one, minted without a restart, logs another browser in.
    const r = runBin(['web', '--login'], { env: bus.env });
    expect(r.exitCode).toBe(0);
    const fresh = /https?:\/\/127\.0\.0\.1:\d+\/login\?token=[\w-]+/.exec(r.stdout)?.[0];
    expect(fresh).toBeDefined();
    expect(new URL(fresh!).origin).toBe(origin);
    expect(fresh).not.toBe(login);
    const other = await browser.createBrowserContext();
    try {
      const p2 = await other.newPage();
      await p2.goto(fresh!);
      await waitFor(async () => (await p2.$eval('.feed', textOf).catch(() => null)) !== null, { what: 'the page in the second browser' });
      expect((await p2.cookies()).some((c) => c.name === 'attend_session')).toBe(true);
    } finally {
      await other.close();
    }
    // Once only.
    const again = await rawRequest(fresh!, { headers: { host: new URL(origin).host } });
    expect(again.status).toBe(403);
    expect(again.headers['set-cookie']).toBeUndefined();
    // Nor is a token whose hash a worker planted in the bus honoured: only the person's
    // private directory (in the key directory) holds logins.
    const planted = 'planted-token-planted-token-0001';
    writeFileSync(join(oldWeb, 'logins', createHash('sha256').update(planted).digest('hex')), `${Date.now() + 600_000}\n`);
    const forged = await rawRequest(`${origin}/login?token=${planted}`, { headers: { host: new URL(origin).host } });
    expect(forged.status).toBe(403);
    expect(forged.headers['set-cookie']).toBeUndefined();
    // A session may not mint the person's login.
    const fromSession = runBin(['web', '--login'], { env: nick.env });
    expect(fromSession.exitCode).toBe(4);
    expect(fromSession.stdout).not.toContain('token=');
    // The server gone, there is nothing to log in to.
    const exited = new Promise((res) => web.once('exit', res));
    web.kill('SIGTERM');
    await exited;
    expect(runBin(['web', '--login'], { env: bus.env }).exitCode).toBe(1);
  });

  it('shows a session go from live to gone', async () => {
    const { login } = await startWeb();
    await page.goto(login);
    const nickStatus = () => page.$$eval('.roster [data-peer]', (els) => (els as unknown as El[]).filter((e) => (e.textContent ?? '').startsWith('Nick')).map((e) => e.getAttribute('data-status')).join());
    await waitFor(async () => {
      const s = await nickStatus();
      return s !== '' && s !== 'gone';
    }, { what: 'Nick live' });
    nick.kill();
    await waitFor(async () => (await nickStatus()) === 'gone', { what: 'Nick gone', timeoutMs: 15_000 });
  });

  it("shows the owner what is held and why, the lineage, who was shown what they sent; a grant goes through attend allow", async () => {
    const ann = fakeSession(bus, { name: 'Ann' });
    try {
      mkdirSync(join(bus.root, 'lineage'), { recursive: true, mode: 0o700 });
      writeFileSync(join(bus.root, 'lineage', nick.sessionId), `${ME}\n`, { mode: 0o600 });
      expect(runBin(['policy', '--mode', 'groups'], { env: bus.env }).exitCode).toBe(0);
      // Ann is in no group with Nick: a file she writes to his tray by hand is held.
      const dir = scopeDir(bus.root, { kind: 'tray', key: attendKey(nick.cwd) });
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, `${ids()()}.signal`), `claude:${ann.sessionId}|p|/p|from_kind:agent|from_id:${ann.sessionId}|to:${nick.sessionId}|cross-group order\n`, { mode: 0o600 });

      const { login } = await startWeb();
      await page.goto(login);
      await waitFor(() => page.$('textarea[name=draft]'), { what: 'the page' });
      await page.type('textarea[name=draft]', '@Nick ping from the owner');
      await page.keyboard.press('Enter');
      await waitFor(async () => (await page.$eval('[role=status]', textOf).catch(() => '')).startsWith('sent to'), { what: 'the send result' });
      // Nick's Stop hook shows it to him: the owner's view names the conduit, not only who.
      const drained = runBin(['inbox', '--drain', '--format', 'hook'], { env: nick.env, input: '{"stop_hook_active":false}' });
      expect(drained.stdout).toContain('ping from the owner');

      const buttons = await page.$$('header nav button');
      let owner = null;
      for (const b of buttons) if ((await b.evaluate(textOf)) === 'owner') owner = b;
      expect(owner).not.toBeNull();
      await owner!.click();
      const section = (label: string) => page.$eval(`section[aria-label="${label}"]`, textOf).catch(() => '');
      await waitFor(async () => (await section('held messages')).includes('cross-group order'), { what: 'the held message' });
      expect(await section('held messages')).toContain(`held: refused by policy: no grant from ${ann.sessionId} to ${nick.sessionId}`);
      await waitFor(async () => (await section('sent messages')).includes('ping from the owner'), { what: 'the sent message' });
      await waitFor(async () => (await section('sent messages')).includes('shown to: Nick (Stop hook)'), { what: 'Nick shown it by his Stop hook' });
      // The lineage: Nick under the person.
      await waitFor(() => page.$(`section[aria-label=lineage] li[data-node="${ME}"] li[data-node="${nick.sessionId}"]`), { what: 'Nick under the person in the tree' });

      // A grant through the form is attend allow's.
      await page.type('form.grant input[name=from]', ann.sessionId);
      await page.type('form.grant input[name=to]', nick.sessionId);
      await page.click('form.grant button[type=submit]');
      await waitFor(() => {
        const g = JSON.parse(runBin(['grants', '--json'], { env: bus.env }).stdout) as { allow: { from: string; to: string }[] };
        return g.allow.some((x) => x.from === ann.sessionId && x.to === nick.sessionId);
      }, { what: 'the grant in attend grants' });
      // Now it is not held: the owner's view says so when asked again.
      await waitFor(async () => (await section('held messages')).includes('Nothing is held'), { what: 'nothing held after the grant' });
    } finally {
      ann.kill();
    }
  });

  it('shows a thread', async () => {
    const first = JSON.parse(runBin(['send', '--json', 'thread start'], { env: nick.env }).stdout).id as string;
    expect(runBin(['reply', '--re', first, 'thread reply'], { env: bus.env }).exitCode).toBe(0);
    const { login } = await startWeb();
    await page.goto(login);
    await waitFor(() => page.$(`.msg[data-id="${first}"] button.thread`), { what: 'the message' });
    await page.click(`.msg[data-id="${first}"] button.thread`);
    await waitFor(async () => {
      const t = await page.$eval('.thread-view', textOf).catch(() => '');
      return t.includes('thread start') && t.includes('thread reply');
    }, { what: 'the thread view' });
  });

  it('refuses a non-loopback address without TLS', () => {
    const r = runBin(['web', '--host', '0.0.0.0'], { env: bus.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('refusing to serve on 0.0.0.0');
  });
});
