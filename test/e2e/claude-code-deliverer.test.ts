// The socket conduit with a real Claude Code 2.1.332 (issue 21 §2): in a session with no
// plugin monitor (`attend install`, `-p`), the SessionStart hook starts `attend deliver`,
// which posts a message sent while the turn runs to the session's inbox socket; the model's
// next request carries it inside `<cross-session-message … from-name="… via attend">`, and the
// Stop hook does not show it again. Interactive (tmux): an idle session is woken by the post, a
// new turn whose request carries the message once.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { peekPending } from '../../tools/bus/delivery/index.js';
import { readPresence } from '../../tools/bus/presence/index.js';
import { listLive } from '../../tools/bus/presence/roster.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import { procInfoFromProc } from '../../tools/identity/system.js';
import { ME, runBin, waitFor } from '../helpers/bus.js';
import { type ClaudeHome, type ClaudeRun, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { agent } from '../helpers/delivery.js';
import { type ApiRequest, type FakeAnthropic, conversationText, lastText, startFakeAnthropic, textOf, toolNames, toolResultCount, toolResults } from '../helpers/fake-anthropic.js';
import { type TmuxClaude, startTmuxClaude } from '../helpers/tmux-claude.js';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
let run: ClaudeRun | undefined;
let cc: TmuxClaude | undefined;
afterEach(async () => {
  run?.kill();
  await cc?.stop();
  await api?.close();
  home?.cleanup();
  home = api = run = cc = undefined;
});

const count = (text: string, part: string) => text.split(part).length - 1;
/** The newest user message of a request: what arrived since the model last spoke (a system message may follow it). */
const userText = (req: ApiRequest) => textOf(req.messages.filter((m) => m.role === 'user').at(-1)?.content);

function liveSession(h: ClaudeHome, pid: number) {
  return listLive({ root: h.root, sessionsDir: join(h.claudeDir, 'sessions'), now: Date.now(), procInfo: procInfoFromProc }).find((p) => p.record?.pid === pid);
}

function outside(h: ClaudeHome, env: Record<string, string>, args: string[]) {
  const r = runBin(args, { env: { PATH: env.PATH!, HOME: h.home, ATTEND_HOME: h.root }, cwd: h.dir });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
}

/** The model's first step: a Bash call that holds the turn until the test writes `go`. */
const holdTurn = (go: string) => ({ tool: 'Bash', input: { command: `while [ ! -f ${go} ]; do sleep 0.05; done; echo RELEASED`, description: 'wait' } });

/** `claude -p` running (its turn held by the script), once its session and its deliverer are live. */
async function startWorker(h: ClaudeHome, env: Record<string, string>, allowed: string) {
  run = runClaude(['-p', 'go', '--allowedTools', allowed, '--output-format', 'json'], { env: { ...env, ANTHROPIC_BASE_URL: api!.url }, cwd: h.project });
  const b = await waitFor(() => liveSession(h, run!.pid), { timeoutMs: 30_000, what: 'session B live' });
  await waitFor(() => liveSession(h, run!.pid)?.presence.some((p) => p.role === 'deliverer'), { timeoutMs: 30_000, what: 'the deliverer heartbeat' });
  return { b, run };
}

describe('claude code: the deliverer (socket conduit)', () => {
  it('-p: a message sent while the turn runs arrives in the next request inside <cross-session-message>, and the Stop hook does not repeat it', async () => {
    const h = (home = makeClaudeHome());
    const env = h.env({ baseUrl: '' });
    expect(runBin(['install'], { env, cwd: h.project }).exitCode).toBe(0);
    const go = join(h.dir, 'go');
    api = await startFakeAnthropic((req) => {
      const step = toolResultCount(req);
      if (step === 0) return holdTurn(go);
      return { text: `turn after ${step} tool results` };
    });
    const { b, run: worker } = await startWorker(h, env, 'Bash');
    // The model was told what to expect from this conduit, not to arm a Monitor.
    const firstRequest = await waitFor(() => api!.requests[0], { timeoutMs: 30_000, what: 'the first request' });
    expect(conversationText(firstRequest)).toContain('do not arm a Monitor for attend');
    const id = outside(h, env, ['send', '--to', b.id, 'socket-payload-5d1e']);
    const who = agent(b.id, h.project);
    // Posted and recorded by the deliverer before the turn goes on.
    await waitFor(() => peekPending(h.root, who, { now: Date.now(), reporter: silentReporter }).fresh.length === 0, { timeoutMs: 15_000, what: 'the deliverer recording the post' });
    writeFileSync(go, '');
    const code = await worker.exited(60_000);
    expect(code, worker.stderr()).toBe(0);
    const carrying = api.requests.filter((r) => lastText(r).includes('socket-payload-5d1e') || JSON.stringify(r.messages.slice(-2)).includes('socket-payload-5d1e'));
    expect(carrying.length, api.requests.map((r) => JSON.stringify(r.messages.slice(-1))).join('\n')).toBeGreaterThan(0);
    const first = carrying[0]!;
    const seen = JSON.stringify(first.messages);
    if (process.env.DUMP) console.log(JSON.stringify(first.messages.slice(-2), null, 1));
    expect(seen).toMatch(/<cross-session-message from=\\"uds:[^"\\]+\\" from-name=\\"[^"\\]+ via attend\\">/);
    expect(seen).toContain(`[attend message from_kind=human from=${ME} sig=ok to=${b.id}`);
    expect(seen).toContain(`id=${id}`);
    // One envelope per post: Claude Code escapes any tag after the first (`<\\cross-session-message`).
    expect(seen).not.toMatch(/<\\\\\/?cross-session-message/);
    // The Stop hook did not show it again.
    for (const r of api.requests) expect(lastText(r)).not.toMatch(/Stop hook[\s\S]*socket-payload-5d1e/);
    expect(JSON.parse(worker.stdout())).toMatchObject({ is_error: false });
    // The deliverer went with its session.
    const log = join(h.root, 'state', 'sensor', `deliverer-${worker.pid}.log`);
    await waitFor(() => !liveSession(h, worker.pid) && !existsSync(log), { timeoutMs: 15_000, what: `the deliverer gone with its session${existsSync(log) ? `: ${readFileSync(log, 'utf8')}` : ''}` });
  });

  // A message counts as delivered only when its post drew no receipt (issue 21 item 2): a
  // session that holds or refuses posts from outside sends one, and the message is left unread
  // for the Stop hook, which shows it at the end of the turn, once.
  it.each(['refuse', 'hold'])('-p, crossSessionInbound "%s": the post draws a receipt, and the Stop hook delivers the message instead', async (setting) => {
    const h = (home = makeClaudeHome());
    const env = h.env({ baseUrl: '' });
    expect(runBin(['install'], { env, cwd: h.project }).exitCode).toBe(0);
    const settings = join(h.claudeDir, 'settings.json');
    writeFileSync(settings, JSON.stringify({ ...(JSON.parse(readFileSync(settings, 'utf8')) as object), crossSessionInbound: setting }));
    const go = join(h.dir, 'go');
    api = await startFakeAnthropic((req) => {
      if (toolResultCount(req) === 0) return holdTurn(go);
      return { text: 'done' };
    });
    const { b, run: worker } = await startWorker(h, env, 'Bash');
    const id = outside(h, env, ['send', '--to', b.id, `receipt-payload-${setting}`]);
    // The deliverer stops on the receipt, saying why, and the message is still pending.
    const log = join(h.root, 'state', 'sensor', `deliverer-${worker.pid}.log`);
    const said = setting === 'refuse' ? 'refused' : 'held';
    const logText = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    await waitFor(() => logText().includes(`the session ${said} a post`), { timeoutMs: 15_000, what: `the deliverer told ${said}` }).catch((err: Error) => {
      throw new Error(`${err.message}; its log: ${logText()}`);
    });
    writeFileSync(go, '');
    const code = await worker.exited(60_000);
    expect(code, worker.stderr()).toBe(0);
    // At the model once, by the Stop hook; never as a cross-session message.
    const carrying = api.requests.filter((r) => lastText(r).includes(`receipt-payload-${setting}`));
    expect(carrying, api.requests.map((r) => lastText(r).slice(-400)).join('\n---\n')).toHaveLength(1);
    expect(lastText(carrying[0]!)).toMatch(/Stop hook/);
    const all = JSON.stringify(api.requests.at(-1)!.messages);
    expect(count(all, `id=${id}`)).toBe(1);
    expect(all).not.toContain('<cross-session-message from=\\"uds:');
  });

  // bypassPermissions holds every post from outside the session's process tree, and the
  // deliverer is detached from the hook that starts it (seen on 2.1.332: each post held). So a
  // `-p --dangerously-skip-permissions` worker gets no deliverer: it is told to arm the
  // Monitor, whose sensor is its own child, and doctor says why.
  it('-p --dangerously-skip-permissions: no deliverer; the model is told to arm the Monitor, and doctor says why', async () => {
    const h = (home = makeClaudeHome());
    // IS_SANDBOX: Claude Code refuses the flag to root otherwise (the tests may run as root).
    const env = { ...h.env({ baseUrl: '' }), IS_SANDBOX: '1' };
    expect(runBin(['install'], { env, cwd: h.project }).exitCode).toBe(0);
    api = await startFakeAnthropic((req) => (toolResults(req).some((r) => r.name === 'Bash') ? { text: 'done' } : { tool: 'Bash', input: { command: 'attend doctor --json', description: 'doctor' } }));
    run = runClaude(['-p', 'go', '--dangerously-skip-permissions', '--output-format', 'json'], { env: { ...env, ANTHROPIC_BASE_URL: api.url }, cwd: h.project });
    expect(await run.exited(60_000), run.stderr()).toBe(0);
    const first = conversationText(api.requests[0]!);
    expect(first).toContain('arm the Monitor tool with command `attend run`');
    expect(first).not.toContain('do not arm a Monitor for attend');
    expect(existsSync(join(h.root, 'state', 'sensor', `deliverer-${run.pid}.pid`))).toBe(false);
    const out = lastText(api.requests.at(-1)!);
    const conduit = (JSON.parse(out.slice(out.indexOf('{'))) as { checks: { name: string; detail: string }[] }).checks.find((c) => c.name === 'conduit');
    expect(conduit?.detail).toMatch(/nothing live delivers.*bypassPermissions mode \(its command line/);
  });

  it("-p: the model answers the post with SendMessage to its from= address, and the answer is on the bus as the session's signed reply to the message", async () => {
    const h = (home = makeClaudeHome());
    const env = h.env({ baseUrl: '' });
    expect(runBin(['install'], { env, cwd: h.project }).exitCode).toBe(0);
    const go = join(h.dir, 'go');
    // Claude Code tells the model to "reply via SendMessage to the `from=` address"; this model does.
    api = await startFakeAnthropic((req) => {
      if (toolResultCount(req) === 0) return holdTurn(go);
      const from = /<cross-session-message from="(uds:[^"]+)" from-name="[^"]+ via attend">/.exec(conversationText(req))?.[1];
      if (from === undefined) return { text: 'no message came' };
      if (toolResults(req).some((r) => r.name === 'SendMessage')) return { text: 'answered' };
      if (!toolNames(req).includes('SendMessage')) return { tool: 'ToolSearch', input: { query: 'select:SendMessage' } };
      return { tool: 'SendMessage', input: { to: from, summary: 'answer', message: 'answer-by-sendmessage-4b7e' } };
    });
    const { b, run: worker } = await startWorker(h, env, 'Bash,SendMessage');
    const id = outside(h, env, ['send', '--to', b.id, 'a question for B']);
    await waitFor(() => peekPending(h.root, agent(b.id, h.project), { now: Date.now(), reporter: silentReporter }).fresh.length === 0, { timeoutMs: 15_000, what: 'the deliverer recording the post' });
    writeFileSync(go, '');
    const code = await worker.exited(60_000);
    expect(code, worker.stderr()).toBe(0);
    const sent = toolResults(api.requests.at(-1)!).find((r) => r.name === 'SendMessage');
    const dlog = join(h.root, 'state', 'sensor', `deliverer-${worker.pid}.log`);
    expect(sent?.text, `the deliverer's log: ${existsSync(dlog) ? readFileSync(dlog, 'utf8') : '(none)'}`).toContain('"success":true');
    // The person reads it: from the session, signed, threaded under the message it answers, to its sender.
    const person = { PATH: env.PATH!, HOME: h.home, ATTEND_HOME: h.root };
    const log = join(h.root, 'state', 'sensor', `deliverer-${worker.pid}.log`);
    const reply = await waitFor(
      () => {
        const r = runBin(['inbox', '--json'], { env: person, cwd: h.dir });
        return (JSON.parse(r.stdout) as { messages: { body: string }[] }).messages.find((m) => m.body === 'answer-by-sendmessage-4b7e');
      },
      { timeoutMs: 15_000, what: `the answer on the bus${existsSync(log) ? `; deliverer log: ${readFileSync(log, 'utf8')}` : ''}` },
    );
    expect(reply).toMatchObject({ fromKind: 'agent', fromId: b.id, re: id, to: ME, sig: 'ok' });
  });

  it('interactive (tmux), attend install: an idle session is woken by the post, once; the Stop hook does not repeat it', async () => {
    const h = (home = makeClaudeHome());
    api = await startFakeAnthropic(() => ({ text: 'noted' }));
    const env = h.env({ baseUrl: api.url });
    expect(runBin(['install'], { env, cwd: h.project }).exitCode).toBe(0);
    cc = startTmuxClaude(h, env);
    const { sessionId, pid } = await cc.session();
    await cc.until(() => liveSession(h, pid)?.presence.some((p) => p.role === 'deliverer'), 'the deliverer heartbeat');
    // Idle: nobody has typed, and nothing has asked the model anything.
    expect(api.requests).toEqual([]);
    const id = outside(h, env, ['send', '--to', sessionId, 'idle-payload-9c2b']);
    // The post starts a turn of its own: the first request there is carries the message, in the envelope.
    const first = await cc.until(() => api!.requests[0], 'a turn started by the post');
    const seen = JSON.stringify(first.messages);
    expect(userText(first)).toContain('idle-payload-9c2b');
    expect(userText(first)).toContain('Another Claude session sent a message');
    expect(seen).toMatch(/<cross-session-message from=\\"uds:[^"\\]+\\" from-name=\\"[^"\\]+ via attend\\">/);
    expect(count(seen, `id=${id}`)).toBe(1);
    // The turn ends: the Stop hook runs (its 'drain' stamp) with nothing to add, and the session is idle again.
    await cc.until(() => readPresence(h.root).some((p) => p.id === sessionId && p.role === 'drain'), 'the Stop hook at the end of the turn');
    await cc.until(() => cc!.status() === 'idle', 'the session idle again');
    // A second message, once the first turn is over: by the time it is at the model, a
    // repeat of the first (by the Stop hook or a second post) would be in the conversation.
    const id2 = outside(h, env, ['send', '--to', sessionId, 'idle-payload-second']);
    const later = await cc.until(() => api!.requests.find((r) => userText(r).includes('idle-payload-second')), 'the second message at the model');
    const all = JSON.stringify(later.messages);
    expect(count(all, `id=${id}`)).toBe(1);
    expect(count(all, `id=${id2}`)).toBe(1);
    // The Stop hook added nothing to any request, and one request brought the message in.
    for (const r of api.requests) expect(conversationText(r)).not.toContain('Stop hook');
    expect(api.requests.filter((r) => userText(r).includes('idle-payload-9c2b'))).toHaveLength(1);
  }, 240_000);
});
