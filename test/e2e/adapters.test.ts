// Issue 24 §3, adapters that reach a phone, over real processes: `attend adapter run` against
// fake outlets on 127.0.0.1 (a generic webhook, ntfy, Slack, Telegram) that record every
// request and can be told to fail or to hang. What is for the person reaches an outlet once,
// its body as data; #open traffic does not; an outlet that is down is retried and shown in
// `attend status`; a SIGKILL mid-delivery loses and repeats nothing a receiver keys on; a
// signed reply from the outlet is on the bus as the person's signed, threaded reply, and an
// unsigned or badly signed one writes nothing.

import { createHmac, createPublicKey, verify } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ME, type TempBus, runBin, useFamilyPolicy, useTempBus, waitFor } from '../helpers/bus.js';
import { type SensorProc, startAttend } from '../helpers/delivery.js';
import { privateDirName } from '../../tools/bus/trust/private.js';
import { decodeKeyId } from '../../tools/wire/sign.js';

let bus: TempBus;
const session = useTempBus((b) => {
  bus = b;
  useFamilyPolicy(b);
});

interface Recorded {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A scripted outlet: records requests; `mode` says how it answers (ok, fail with 503, hang). */
interface FakeOutlet {
  url: string;
  requests: Recorded[];
  mode: 'ok' | 'fail' | 'hang';
  /** Requests whose answer was held back by 'hang'. */
  hung: ServerResponse[];
  close(): Promise<void>;
}

const outlets: FakeOutlet[] = [];
const procs: SensorProc[] = [];

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  for (const o of outlets.splice(0)) await o.close();
});

/** An answer with a status other than 200 (Telegram's ok:false comes with a 4xx). */
class Answer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

async function fakeOutlet(answer: (r: Recorded) => unknown = () => ({ ok: true })): Promise<FakeOutlet> {
  const o: FakeOutlet = { url: '', requests: [], mode: 'ok', hung: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body };
      o.requests.push(r);
      if (o.mode === 'hang') return void o.hung.push(res);
      if (o.mode === 'fail') return void res.writeHead(503).end('down');
      const a = answer(r);
      const [status, json] = a instanceof Answer ? [a.status, a.body] : [200, a];
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  o.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  o.close = () =>
    new Promise<void>((resolve) => {
      for (const h of o.hung) h.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  outlets.push(o);
  return o;
}

const person = (args: string[]) => runBin(args, { env: bus.env, cwd: bus.home });

/** As `person`, for a command that talks to a fake outlet of this process (runBin would block its answer). */
async function personAwait(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const p = startAttend(args, bus.env, bus.home);
  procs.push(p);
  const exitCode = (await p.exited) ?? -1;
  return { exitCode, stdout: p.stdout(), stderr: p.stderr() };
}

function ok(r: { exitCode: number; stdout: string; stderr: string }) {
  expect(r.exitCode, r.stderr).toBe(0);
  return r;
}

/** Start the adapter as the person; resolves with the listener's base URL once it listens. */
async function startAdapter(): Promise<{ p: SensorProc; base: string }> {
  const p = startAttend(['adapter', 'run', '--poll-ms', '2000'], bus.env, bus.home);
  procs.push(p);
  const base = await waitFor(() => /listening on (http:\/\/\S+)/.exec(p.stdout())?.[1] ?? (p.proc.exitCode !== null ? `exited: ${p.stderr()}` : undefined), { what: 'the adapter listening' });
  expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return { p, base };
}

function addWebhook(o: FakeOutlet, name = 'phone'): string {
  const r = ok(person(['adapter', 'add', 'webhook', name, '--url', `${o.url}/hook`, '--json']));
  return (JSON.parse(r.stdout) as { secret: string }).secret;
}

const sendFrom = (s: { env: Record<string, string>; cwd: string }, args: string[]) => {
  const r = ok(runBin(['send', ...args, '--json'], { env: s.env, cwd: s.cwd }));
  return (JSON.parse(r.stdout) as { id: string }).id;
};

const webhookBodies = (o: FakeOutlet) => o.requests.map((r) => JSON.parse(r.body) as { message: { id: string; body: string; why: string; fromId: string } });

function sign(secret: string, body: string, ts = String(Math.floor(Date.now() / 1000))) {
  return { 'content-type': 'application/json', 'x-attend-timestamp': ts, 'x-attend-signature': `v1=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}` };
}

interface InboxJson {
  messages: { id: string; body: string; re: string | null; fromKind: string; fromId: string; sig: string | null }[];
}
const inboxOf = (s: { env: Record<string, string>; cwd: string }) => JSON.parse(ok(runBin(['inbox', '--json'], { env: s.env, cwd: s.cwd })).stdout) as InboxJson;

describe('attend adapter (issue 24 §3)', () => {
  it('keeps its config 0600, shows no secret in list, and refuses a bad outlet with nothing written', async () => {
    const o = await fakeOutlet();
    const secret = addWebhook(o);
    // Kept in the person's private directory of the bus, in the key directory, not the bus root.
    const file = join(bus.home, '.config', 'attend', 'keys', 'buses', privateDirName(bus.root), 'adapters', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain(secret);
    expect(existsSync(join(bus.root, 'adapters'))).toBe(false);
    const list = ok(person(['adapter', 'list']));
    expect(list.stdout).toContain('phone');
    expect(list.stdout).not.toContain(secret);
    const bad = person(['adapter', 'add', 'webhook', 'x', '--url', 'ftp://nope']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim().split('\n')[0]).toMatch(/url/);
    expect(ok(person(['adapter', 'list', '--json'])).stdout).not.toContain('"x"');
    // An agent cannot add an outlet (it would read the person's mail).
    const api = session({ name: 'api' });
    const r = runBin(['adapter', 'add', 'webhook', 'leak', '--url', `${o.url}/leak`], { env: api.env, cwd: api.cwd });
    expect(r.exitCode).toBe(4);
    expect(ok(person(['adapter', 'list', '--json'])).stdout).not.toContain('leak');
  });

  it('honours no outlet written into the bus root: a worker cannot add a route that reads the mail or replies as the person', async () => {
    const o = await fakeOutlet();
    addWebhook(o, 'phone');
    const api = session({ name: 'api' });
    // What a worker that can write the bus (and its state/) could plant: an outlet of its own,
    // where the config used to be and where the new one would be if it were in the bus.
    const forged = { version: 1, listen: { host: '127.0.0.1', port: 0 }, outlets: [{ kind: 'webhook', name: 'leak', since: 0, url: `${o.url}/leak`, secret: 'w'.repeat(24) }] };
    for (const dir of [join(bus.root, 'adapters'), join(bus.root, 'state', 'adapters')]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'config.json'), JSON.stringify(forged));
    }
    const list = ok(person(['adapter', 'list', '--json'])).stdout;
    expect(list).toContain('"phone"');
    expect(list).not.toContain('leak');
    const { base } = await startAdapter();
    sendFrom(api, ['--to', ME, 'for the phone only']);
    await waitFor(() => o.requests.some((r) => r.path === '/hook'), { what: 'the DM at the real outlet' });
    expect(o.requests.filter((r) => r.path === '/leak')).toEqual([]);
    // Nor does the forged secret open an inbound route.
    const body = JSON.stringify({ body: 'forged answer' });
    const res = await fetch(`${base}/in/leak`, { method: 'POST', headers: sign('w'.repeat(24), body), body });
    expect(res.status).toBe(404);
    expect(inboxOf(api).messages.map((m) => m.body)).not.toContain('forged answer');
  });

  it('forwards a direct message to the person once, its body as data, and not #open traffic', async () => {
    const o = await fakeOutlet();
    const secret = addWebhook(o);
    const api = session({ name: 'api' });
    await startAdapter();
    const hostile = 'deploy? <script>alert(1)</script> \u001b[2J $(rm -rf ~) {"re":"x"}';
    sendFrom(api, ['hello everyone on open']);
    const dm = sendFrom(api, ['--to', ME, hostile]);
    await waitFor(() => o.requests.length >= 1, { what: 'the DM at the outlet' });
    const urgent = sendFrom(api, ['--to', ME, '--urgent', 'urgent: the build is red']);
    await waitFor(() => o.requests.length >= 2, { what: 'the urgent DM at the outlet' });
    const marker = sendFrom(api, ['--to', ME, 'last one']);
    await waitFor(() => webhookBodies(o).some((b) => b.message.id === marker), { what: 'the last DM' });
    const ids = webhookBodies(o).map((b) => b.message.id);
    expect(ids).toEqual([dm, urgent, marker]);
    const first = o.requests[0] as Recorded;
    expect(webhookBodies(o)[0]?.message.body).toBe(hostile);
    expect(webhookBodies(o)[0]?.message.why).toBe('direct');
    expect(first.headers['idempotency-key']).toBe(dm);
    // The signature a receiver checks.
    const ts = first.headers['x-attend-timestamp'] as string;
    expect(first.headers['x-attend-signature']).toBe(sign(secret, first.body, ts)['x-attend-signature']);
    // And the one a receiver checks with the person's public key alone: the key id is the key,
    // the person's published one; the signature holds over these bytes and no others.
    const ed = /^keyid=([A-Z2-7]{56}), sig=([A-Za-z0-9+/=]+)$/.exec(String(first.headers['x-attend-ed25519']));
    expect(ed).not.toBeNull();
    const [, keyId, sig] = ed as unknown as [string, string, string];
    expect(readFileSync(join(bus.root, 'keys', `${ME}.pub`), 'utf8')).toContain(keyId);
    const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(decodeKeyId(keyId) as Uint8Array).toString('base64url') }, format: 'jwk' });
    const signed = (t: string, b: string) => Buffer.from(`attend/webhook/v1\n${t}\n${b}`);
    expect(verify(null, signed(ts, first.body), pub, Buffer.from(sig, 'base64'))).toBe(true);
    expect(verify(null, signed(ts, first.body.replace('deploy?', 'deploy!')), pub, Buffer.from(sig, 'base64'))).toBe(false);
    expect(verify(null, signed(String(Number(ts) + 1), first.body), pub, Buffer.from(sig, 'base64'))).toBe(false);
    expect(webhookBodies(o).some((b) => b.message.body === 'hello everyone on open')).toBe(false);
  });

  it('retries an outlet that is down, shows the wait in attend status, and delivers once when it is back', async () => {
    const o = await fakeOutlet();
    o.mode = 'fail';
    addWebhook(o);
    const api = session({ name: 'api' });
    await startAdapter();
    const dm = sendFrom(api, ['--to', ME, 'are you there?']);
    await waitFor(() => o.requests.length >= 2, { what: 'a retry', timeoutMs: 15_000 });
    const status = await waitFor(() => {
      const s = ok(person(['status'])).stdout;
      return s.includes(`${dm} waits`) ? s : undefined;
    }, { what: 'the wait in attend status' });
    expect(status).toMatch(/phone: running, 0 delivered, 1 waiting/);
    expect(status).toContain('HTTP 503');
    const json = JSON.parse(ok(person(['status', '--json'])).stdout) as { adapters: { outlet: string; waiting: { id: string }[] }[] };
    expect(json.adapters[0]?.waiting.map((w) => w.id)).toEqual([dm]);
    o.mode = 'ok';
    const tries = o.requests.length;
    await waitFor(() => ok(person(['adapter', 'status'])).stdout.includes('1 delivered, 0 waiting'), { what: 'delivered', timeoutMs: 15_000 });
    const okCount = o.requests.length - tries;
    expect(okCount).toBe(1);
    // A 503 is the outlet's no: the try that got through is not marked as a possible repeat.
    expect((JSON.parse((o.requests.at(-1) as Recorded).body) as { mayRepeat?: boolean }).mayRepeat).toBeUndefined();
  });

  it('SIGKILLed mid-delivery and restarted: nothing lost, and a repeat only of the one in flight, under the same Idempotency-Key', async () => {
    const o = await fakeOutlet();
    addWebhook(o);
    const api = session({ name: 'api' });
    const { p } = await startAdapter();
    const a = sendFrom(api, ['--to', ME, 'one']);
    await waitFor(() => o.requests.length === 1, { what: 'the first delivery' });
    o.mode = 'hang';
    const b = sendFrom(api, ['--to', ME, 'two']);
    const c = sendFrom(api, ['--to', ME, 'three']);
    await waitFor(() => o.hung.length === 1, { what: 'a request in flight' });
    p.proc.kill('SIGKILL');
    await p.exited;
    o.mode = 'ok';
    await startAdapter();
    await waitFor(() => webhookBodies(o).some((x) => x.message.id === c), { what: 'the rest after the restart' });
    await waitFor(() => ok(person(['adapter', 'status'])).stdout.includes('3 delivered, 0 waiting'), { what: 'all three in the ledger' });
    const keys = o.requests.map((r) => r.headers['idempotency-key']);
    expect([...new Set(keys)]).toEqual([a, b, c]);
    // The answered one is never sent again; the one in flight at the kill is, once more, and
    // says so (mayRepeat), under the same key; nothing else is marked.
    expect(keys.filter((k) => k === a)).toHaveLength(1);
    expect(keys.filter((k) => k === b)).toHaveLength(2);
    expect(keys.filter((k) => k === c)).toHaveLength(1);
    const marks = o.requests.map((r) => [r.headers['idempotency-key'], (JSON.parse(r.body) as { mayRepeat?: boolean }).mayRepeat ?? false]);
    expect(marks).toEqual([[a, false], [b, false], [b, true], [c, false]]);
  });

  it('ntfy, Slack and Telegram SIGKILLed with a request held open: after the restart the one in flight is sent once more, marked "(may repeat)", the rest once and unmarked', async () => {
    let n = 100;
    const ntfy = await fakeOutlet(() => ({ id: 'x', event: 'message' }));
    const slack = await fakeOutlet(() => 'ok');
    const tg = await fakeOutlet(() => ({ ok: true, result: { message_id: ++n } }));
    const all = [ntfy, slack, tg];
    ok(person(['adapter', 'add', 'ntfy', 'ntfy', '--url', `${ntfy.url}/my-topic`]));
    ok(person(['adapter', 'add', 'slack', 'slack', '--url', `${slack.url}/services/T/B/X`, '--signing-secret', 'slack-signing-secret-0123456789', '--slack-user', 'U0PERSON']));
    ok(person(['adapter', 'add', 'telegram', 'tg', '--token', '123456:ABCdefGHIjklMNOpqrSTUvwx', '--chat-id', '4242', '--api', tg.url]));
    const api = session({ name: 'api' });
    const { p } = await startAdapter();
    const a = sendFrom(api, ['--to', ME, 'one']);
    await waitFor(() => all.every((o) => o.requests.length === 1), { what: 'the first at every outlet' });
    for (const o of all) o.mode = 'hang';
    const b = sendFrom(api, ['--to', ME, 'two']);
    const c = sendFrom(api, ['--to', ME, 'three']);
    await waitFor(() => all.every((o) => o.hung.length === 1), { what: 'a request held open at every outlet' });
    p.proc.kill('SIGKILL');
    await p.exited;
    for (const o of all) o.mode = 'ok';
    await startAdapter();
    await waitFor(() => ok(person(['adapter', 'status'])).stdout.match(/3 delivered, 0 waiting/g)?.length === 3, { what: 'all three delivered at every outlet' });
    // What each outlet showed, in order: the text's first line, and the id it names.
    const shown = (o: FakeOutlet) =>
      o.requests.map((r) => {
        const j = JSON.parse(r.body) as { message?: string; text?: string };
        const text = j.message ?? j.text ?? '';
        return `${text.startsWith('(may repeat) ') ? 'marked' : 'plain'} ${[a, b, c].find((id) => text.includes(id))}`;
      });
    for (const o of all) expect(shown(o)).toEqual([`plain ${a}`, `plain ${b}`, `marked ${b}`, `plain ${c}`]);
    // ntfy: each publish carries the message id as its sequence id, so on a server and client
    // that know sequences the repeat replaces the first notification.
    expect(ntfy.requests.map((r) => (JSON.parse(r.body) as { sequence_id: string }).sequence_id)).toEqual([a, b, b, c]);
    expect(ntfy.requests.map((r) => r.headers['x-sequence-id'])).toEqual([a, b, b, c]);
  });

  it('writes a signed reply from the outlet as the person\'s signed, threaded reply; a bad or missing signature writes nothing', async () => {
    const o = await fakeOutlet();
    const secret = addWebhook(o);
    const api = session({ name: 'api' });
    const { base } = await startAdapter();
    const q = sendFrom(api, ['--to', ME, 'ship it?']);
    await waitFor(() => o.requests.length === 1, { what: 'the question at the outlet' });
    const before = inboxOf(api).messages.length;
    const body = JSON.stringify({ re: q, body: 'yes <b>ship</b> it' });
    // Refused: no signature, a wrong one, a stale timestamp, a message never sent to it.
    expect((await fetch(`${base}/in/phone`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await fetch(`${base}/in/phone`, { method: 'POST', headers: sign('wrong-secret-wrong-secret', body), body })).status).toBe(401);
    expect((await fetch(`${base}/in/phone`, { method: 'POST', headers: sign(secret, body, String(Math.floor(Date.now() / 1000) - 3600)), body })).status).toBe(401);
    const foreign = JSON.stringify({ re: sendFrom(api, ['on open']), body: 'x' });
    expect((await fetch(`${base}/in/phone`, { method: 'POST', headers: sign(secret, foreign), body: foreign })).status).toBe(404);
    expect(inboxOf(api).messages.length).toBe(before + 1); // only the #open post
    const res = await fetch(`${base}/in/phone`, { method: 'POST', headers: sign(secret, body), body });
    expect(res.status).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const got = inboxOf(api).messages.find((m) => m.id === id);
    expect(got).toMatchObject({ body: 'yes <b>ship</b> it', re: q, fromKind: 'human', fromId: ME, sig: 'ok' });
  });

  it('ntfy: a JSON publish to the server root, the topic and text as data; urgent at priority 5', async () => {
    const o = await fakeOutlet(() => ({ id: 'x', event: 'message' }));
    ok(person(['adapter', 'add', 'ntfy', 'ntfy', '--url', `${o.url}/my-topic`, '--token', 'tk_abc']));
    const api = session({ name: 'api' });
    // ntfy takes no replies: no listener is needed, and none is started.
    const p = startAttend(['adapter', 'run'], bus.env, bus.home);
    procs.push(p);
    const id = sendFrom(api, ['--to', ME, '--urgent', 'Title: spoofed\n<b>disk</b> full']);
    await waitFor(() => o.requests.length === 1, { what: 'the ntfy publish' });
    const r = o.requests[0] as Recorded;
    expect(r.path).toBe('/');
    expect(r.headers.authorization).toBe('Bearer tk_abc');
    const j = JSON.parse(r.body) as { topic: string; message: string; title: string; priority: number };
    expect(j).toMatchObject({ topic: 'my-topic', priority: 5, title: 'attend: api' });
    expect(j.message).toContain('Title: spoofed\n<b>disk</b> full');
    expect(j.message).toContain(id);
    expect(p.stdout()).not.toContain('listening');
  });

  it('Slack: the text escaped (no <!channel>, no links), and a slash-command reply verified by the v0 signature and the person\'s member id', async () => {
    const o = await fakeOutlet(() => 'ok');
    const signing = 'slack-signing-secret-0123456789';
    ok(person(['adapter', 'add', 'slack', 'slack', '--url', `${o.url}/services/T/B/X`, '--signing-secret', signing, '--slack-user', 'U0PERSON']));
    const api = session({ name: 'api' });
    const { base } = await startAdapter();
    const q = sendFrom(api, ['--to', ME, 'ping <!channel> <https://evil.example|click> & more']);
    await waitFor(() => o.requests.length === 1, { what: 'the Slack post' });
    const text = (JSON.parse((o.requests[0] as Recorded).body) as { text: string }).text;
    expect(text).toContain('ping &lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; more');
    expect(text).not.toContain('<!channel>');
    const formOf = (user: string) => new URLSearchParams({ command: '/attend', text: `${q} looks good`, user_id: user }).toString();
    let form = formOf('U0SOMEONE');
    const ts = String(Math.floor(Date.now() / 1000));
    const slackSig = (secret: string) => `v0=${createHmac('sha256', secret).update(`v0:${ts}:${form}`).digest('hex')}`;
    // Signed by Slack, but another member of the workspace: not the person.
    expect((await fetch(`${base}/slack/slack`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': ts, 'x-slack-signature': slackSig(signing) }, body: form })).status).toBe(403);
    form = formOf('U0PERSON');
    const post = (sig: string | null) =>
      fetch(`${base}/slack/slack`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': ts, ...(sig ? { 'x-slack-signature': sig } : {}) }, body: form });
    expect((await post(null)).status).toBe(401);
    expect((await post(slackSig('another-secret-0123456789'))).status).toBe(401);
    expect(inboxOf(api).messages.some((m) => m.body === 'looks good')).toBe(false);
    const res = await post(slackSig(signing));
    expect(res.status).toBe(200);
    const got = inboxOf(api).messages.find((m) => m.body === 'looks good');
    expect(got).toMatchObject({ re: q, fromKind: 'human', fromId: ME, sig: 'ok' });
  });

  it('Telegram: sendMessage as plain text; a reply to that message (secret_token, the person\'s chat) is the person\'s threaded reply', async () => {
    let n = 100;
    const o = await fakeOutlet(() => ({ ok: true, result: { message_id: ++n } }));
    const token = '123456:ABCdefGHIjklMNOpqrSTUvwx';
    const r = ok(person(['adapter', 'add', 'telegram', 'tg', '--token', token, '--chat-id', '4242', '--api', o.url, '--json']));
    const secretToken = (JSON.parse(r.stdout) as { secretToken: string }).secretToken;
    const api = session({ name: 'api' });
    const { base } = await startAdapter();
    const q = sendFrom(api, ['--to', ME, 'merge <b>now</b>?']);
    await waitFor(() => o.requests.length === 1, { what: 'the Telegram sendMessage' });
    const sent = o.requests[0] as Recorded;
    expect(sent.path).toBe(`/bot${token}/sendMessage`);
    const j = JSON.parse(sent.body) as Record<string, unknown>;
    expect(j.chat_id).toBe('4242');
    expect(j.parse_mode).toBeUndefined();
    expect(j.text).toContain('merge <b>now</b>?');
    const update = (chat: number, replyTo: number, text: string) => JSON.stringify({ update_id: 1, message: { message_id: 7, chat: { id: chat }, text, reply_to_message: { message_id: replyTo } } });
    const post = (body: string, secret: string | null) =>
      fetch(`${base}/telegram/tg`, { method: 'POST', headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) }, body });
    expect((await post(update(4242, 101, 'no token'), null)).status).toBe(401);
    expect((await post(update(4242, 101, 'wrong token'), 'x'.repeat(32))).status).toBe(401);
    // Another chat with the bot is not the person.
    expect((await post(update(999, 101, 'from a stranger'), secretToken)).status).toBe(200);
    expect(inboxOf(api).messages.some((m) => ['no token', 'wrong token', 'from a stranger'].includes(m.body))).toBe(false);
    expect((await post(update(4242, 101, 'merged'), secretToken)).status).toBe(200);
    const got = inboxOf(api).messages.find((m) => m.body === 'merged');
    expect(got).toMatchObject({ re: q, fromKind: 'human', fromId: ME, sig: 'ok' });
  });

  it('attend adapter hook registers the bot\'s webhook (setWebhook: the route, the secret_token, message updates only); refuses http://, and claims nothing when Telegram says no', async () => {
    let refuse = true;
    let refuseDelete = true;
    const o = await fakeOutlet((r) =>
      r.path.endsWith('/setWebhook') && refuse
        ? new Answer(400, { ok: false, error_code: 400, description: 'Bad Request: bad webhook: Failed to resolve host' })
        : r.path.endsWith('/deleteWebhook') && refuseDelete
          ? new Answer(401, { ok: false, error_code: 401, description: 'Unauthorized' })
          : { ok: true, result: true, description: 'Webhook was set' },
    );
    const token = '123456:ABCdefGHIjklMNOpqrSTUvwx';
    const secretToken = (JSON.parse(ok(person(['adapter', 'add', 'telegram', 'tg', '--token', token, '--chat-id', '4242', '--api', o.url, '--json'])).stdout) as { secretToken: string }).secretToken;
    const hookOf = () => (JSON.parse(ok(person(['adapter', 'list', '--json'])).stdout) as { outlets: { hook?: string | null }[] }).outlets[0]?.hook;
    // Not https: a usage error, one line, and nothing asked of Telegram.
    for (const url of ['http://attend.example.net', 'attend.example.net', 'https://attend.example.net/?x=1']) {
      const r = person(['adapter', 'hook', 'tg', '--url', url]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim().split('\n')[0]).toMatch(/--url takes the public https:\/\//);
    }
    expect(person(['adapter', 'hook', 'tg']).exitCode).toBe(2);
    expect(o.requests).toEqual([]);
    // An agent cannot point the person's bot elsewhere.
    const api = session({ name: 'api' });
    expect(runBin(['adapter', 'hook', 'tg', '--url', 'https://evil.example'], { env: api.env, cwd: api.cwd }).exitCode).toBe(4);
    expect(o.requests).toEqual([]);
    // Telegram says no: its reason, exit 4, and no hook recorded.
    const no = await personAwait(['adapter', 'hook', 'tg', '--url', 'https://attend.example.net/']);
    expect(no.exitCode).toBe(4);
    expect(no.stderr).toContain('Telegram refused setWebhook: Bad Request: bad webhook: Failed to resolve host');
    expect(no.stderr).not.toContain(token);
    expect(hookOf()).toBeNull();
    refuse = false;
    const yes = ok(await personAwait(['adapter', 'hook', 'tg', '--url', 'https://attend.example.net/']));
    expect(yes.stdout).toContain('https://attend.example.net/telegram/tg');
    expect(o.requests.map((r) => r.path)).toEqual([`/bot${token}/setWebhook`, `/bot${token}/setWebhook`]);
    expect(JSON.parse((o.requests[1] as Recorded).body)).toEqual({ url: 'https://attend.example.net/telegram/tg', secret_token: secretToken, allowed_updates: ['message'] });
    expect(hookOf()).toBe('https://attend.example.net/telegram/tg');
    expect(ok(person(['adapter', 'list'])).stdout).toContain('hook https://attend.example.net/telegram/tg');
    // Other kinds have nothing to register: told what to configure by hand.
    ok(person(['adapter', 'add', 'webhook', 'phone', '--url', `${o.url}/hook`]));
    const wh = person(['adapter', 'hook', 'phone', '--url', 'https://attend.example.net']);
    expect(wh.exitCode).toBe(2);
    expect(wh.stderr).toContain('https://attend.example.net/in/phone');
    expect(person(['adapter', 'hook', 'nope', '--url', 'https://attend.example.net']).exitCode).toBe(1);

    // Removed, Telegram is told first (deleteWebhook); a refusal keeps the outlet here.
    const names = () => (JSON.parse(ok(person(['adapter', 'list', '--json'])).stdout) as { outlets: { name: string }[] }).outlets.map((x) => x.name);
    const kept = await personAwait(['adapter', 'remove', 'tg']);
    expect(kept.exitCode).toBe(4);
    expect(kept.stderr).toContain('Telegram refused deleteWebhook: Unauthorized; tg is not removed');
    expect(kept.stderr).toContain('--keep-hook');
    expect(kept.stderr).not.toContain(token);
    expect(names()).toEqual(['tg', 'phone']);
    refuseDelete = false;
    const gone = ok(await personAwait(['adapter', 'remove', 'tg']));
    expect(gone.stdout).toContain('its webhook deleted at Telegram');
    expect(o.requests.filter((r) => r.path.endsWith('/deleteWebhook')).map((r) => r.path)).toEqual([`/bot${token}/deleteWebhook`, `/bot${token}/deleteWebhook`]);
    expect(names()).toEqual(['phone']);
  });

  it('the Bot API out of reach: hook is exit 5 and records nothing; remove keeps the outlet unless told --keep-hook', async () => {
    const o = await fakeOutlet(() => ({ ok: true, result: true }));
    ok(person(['adapter', 'add', 'telegram', 'tg', '--token', '123456:ABCdefGHIjklMNOpqrSTUvwx', '--chat-id', '4242', '--api', o.url]));
    ok(await personAwait(['adapter', 'hook', 'tg', '--url', 'https://attend.example.net']));
    await o.close();
    const hook = await personAwait(['adapter', 'hook', 'tg', '--url', 'https://elsewhere.example.net']);
    expect(hook.exitCode).toBe(5);
    expect(hook.stderr.trim().split('\n')[0]).toMatch(/the Telegram Bot API at http:\/\/127\.0\.0\.1:\d+ could not be reached \(ECONNREFUSED\); no webhook was set/);
    const listed = () => (JSON.parse(ok(person(['adapter', 'list', '--json'])).stdout) as { outlets: { name: string; hook?: string | null }[] }).outlets;
    expect(listed()[0]?.hook).toBe('https://attend.example.net/telegram/tg');
    const kept = await personAwait(['adapter', 'remove', 'tg']);
    expect(kept.exitCode).toBe(5);
    expect(kept.stderr).toContain('the webhook is still set; tg is not removed');
    expect(listed().map((x) => x.name)).toEqual(['tg']);
    const gone = ok(await personAwait(['adapter', 'remove', 'tg', '--keep-hook']));
    expect(gone.stdout).toContain('its webhook https://attend.example.net/telegram/tg is still set at Telegram');
    expect(listed()).toEqual([]);
  });

  it('an urgent #open post and a mention in a channel reach the outlet, other channel traffic does not; a held message is told as a notice without its body', async () => {
    const o = await fakeOutlet();
    addWebhook(o);
    const api = session({ name: 'api' });
    // Written before the adapter runs, then tampered with: its signature no longer holds.
    const sent = JSON.parse(ok(runBin(['send', '--to', ME, 'the original words', '--json'], { env: api.env, cwd: api.cwd })).stdout) as { id: string; files: string[] };
    for (const f of sent.files) writeFileSync(f, readFileSync(f, 'utf8').replace('the original words', 'the tampered words'));
    await startAdapter();
    await waitFor(() => o.requests.length >= 1, { what: 'the held notice' });
    const notice = webhookBodies(o)[0]?.message;
    expect(notice).toMatchObject({ id: sent.id, why: 'held' });
    expect(notice?.body).toMatch(/^\(held: .*attend inbox --held/);
    expect(JSON.stringify(webhookBodies(o))).not.toContain('tampered');
    const urgent = sendFrom(api, ['--urgent', 'fire drill on #open']);
    ok(person(['join', 'ops']));
    ok(runBin(['join', 'ops'], { env: api.env, cwd: api.cwd }));
    const chatter = sendFrom(api, ['--channel', 'ops', 'channel chatter, for nobody in particular']);
    const mention = sendFrom(api, ['--channel', 'ops', '--to', ME, 'look at this, person']);
    await waitFor(() => webhookBodies(o).some((b) => b.message.id === mention), { what: 'the mention' });
    const byId = new Map(webhookBodies(o).map((b) => [b.message.id, b.message.why]));
    expect(byId.get(urgent)).toBe('urgent');
    expect(byId.get(mention)).toBe('mention');
    expect(byId.has(chatter)).toBe(false);
  });
});
