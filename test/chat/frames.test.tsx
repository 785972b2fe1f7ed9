// Frames of the main screens through ink-testing-library, on a real temporary bus with a
// real live session (fakeSession) and the real actions.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import stringWidth from 'string-width';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChatActions } from '../../tools/chat/actions.js';
import { App } from '../../tools/chat/App.js';
import { createBusSource } from '../../tools/chat/bus-source.js';
import { keyHelpLines } from '../../tools/chat/keys.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { attendKey } from '../../tools/wire/names.js';
import { remoteMachine } from '../helpers/remote.js';
import { type FakeSession, fakeSession, makeTempBus, runInProcess, seeLive, type TempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
/** The person of the bus: the chat's operator, and the person whose terminal started the sessions. */
const PERSON = 'tester';
let sessions: FakeSession[] = [];
let unmounts: (() => void)[] = [];
let cleanups: (() => void)[] = [];

beforeEach(() => {
  bus = makeTempBus();
  sessions = [];
  unmounts = [];
  cleanups = [];
});
afterEach(() => {
  for (const u of unmounts) u();
  for (const c of cleanups) c();
  for (const s of sessions) s.dispose();
  bus.cleanup();
});

function renderChat(opts: { depth?: 0 | 1 | 2 | 3 } = {}) {
  const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: PERSON });
  const root = makeCtx().root();
  // What start-chat's heartbeat does, so the operator is live for others to address.
  writePresence(root, { id: 'tester', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
  const source = createBusSource({ root, rescanMs: 200, reader: { id: PERSON, kind: 'human', user: PERSON } });
  const actions = createChatActions({ makeCtx, root, now: Date.now });
  const inst = render(<App me="tester" source={source} actions={actions} depth={opts.depth ?? 0} now={Date.now} mouse={false} setMouse={() => {}} rosterMs={200} />);
  unmounts.push(() => inst.unmount());
  const frame = () => inst.lastFrame() ?? '';
  const until = async (pred: (f: string) => boolean, what: string) => {
    try {
      return await waitFor(() => pred(frame()) && frame(), { what, timeoutMs: 5000 });
    } catch (err) {
      throw new Error(`${(err as Error).message}; last frame:\n${frame()}\nstderr:\n${inst.stderr.lastFrame() ?? ''}`);
    }
  };
  const type = async (text: string) => {
    for (const ch of text) inst.stdin.write(ch);
    // Wait for the compose row itself: the status line also mentions `/help`.
    await until((f) => f.includes(`> ${text}`), `typed ${text}`);
  };
  return { inst, frame, until, type, root, press: (seq: string) => inst.stdin.write(seq) };
}

function live(name: string): FakeSession {
  const s = fakeSession(bus, { name });
  sessions.push(s);
  return s;
}

describe('attend chat frames', () => {
  it('a session that ended shows by its last name, marked gone (issue #10 item 16)', async () => {
    const api = live('api');
    await runInProcess(['send', 'parting words'], { env: api.env, user: PERSON });
    api.kill();
    const c = renderChat();
    const f = await c.until((x) => x.includes('parting words'), 'history');
    expect(f).toMatch(/\d\d:\d\d:\d\d api \(gone\) {2}#open/);
  });

  it('the thread marker names a gone sender by the same rule as the header (issue 19)', async () => {
    // The marker had a rule of its own (the live name, else the raw id): a reply to a session
    // that ended read `↳ re 00000000-…` where the header of the same message read `api (gone)`.
    const api = live('api');
    const asked = (await runInProcess(['send', 'who owns the schema?'], { env: api.env, user: PERSON })).stdout.trim();
    api.kill();
    // A person of another machine answers (the only other person a bus can show, issue 20).
    const box = remoteMachine(bus, 'box', 'here');
    cleanups.push(() => box.cleanup());
    const c = renderChat();
    box.write({ kind: 'open' }, { fromId: 'ops-lead', fromKind: 'human', to: '*', re: asked, body: 'I do' });
    const f = await c.until((x) => x.includes('I do'), 'the reply');
    expect(f).toMatch(/ops-lead@box \(human\) {2}#open {2}↳ re api \(gone\)/);
  });

  it('shows tabs, history, the roster and the status line without colour under NO_COLOR', async () => {
    const nick = live('Nick');
    await runInProcess(['send', 'first words'], { env: nick.env, user: PERSON });
    const c = renderChat();
    const f = await c.until((x) => x.includes('first words') && x.includes('Nick idle'), 'history and roster');
    expect(f).toMatch(/\[merged\] {2}#open {3}direct/);
    expect(f).toMatch(/\d\d:\d\d:\d\d Nick {2}#open/);
    expect(f).toContain('to #open (everyone)');
    expect(f).toContain('Esc quit');
    // No conduit of Nick is live (no sensor heartbeat, no Stop hook): the roster says a message waits.
    expect(f).toContain('Nick idle waiting');
    expect(f).not.toContain('deaf');
    expect(f).not.toContain('\x1b[');
  });

  it('never sends to a typo: suggests, Tab completes, then it sends and writes the signal file as the human (issue 10 item 13)', async () => {
    const hana = live('Hana');
    writePresence(bus.root, { id: hana.sessionId, kind: 'agent', origin: hana.cwd, heartbeat: Date.now(), role: 'sensor', pid: hana.pid });
    const c = renderChat();
    const roster = await c.until((x) => x.includes('Hana idle'), 'roster');
    expect(roster).not.toContain('waiting');
    await c.type('@hanna');
    await c.until((x) => x.includes('── ✗ nobody known is called @hanna; did you mean @Hana? (Tab completes)'), 'the suggestion before Enter');
    c.press('\r');
    await c.until((x) => x.includes('not sent: nobody known is called @hanna') && x.includes('> @hanna'), 'refused, draft kept');
    const dir = join(c.root, 'signals', attendKey(hana.cwd));
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    c.press('\t');
    await c.until((x) => /^> @Hana\s*$/m.test(x) && x.includes('── to Hana'), 'completed');
    for (const ch of 'ship it') c.press(ch);
    await c.until((x) => x.includes('> @Hana ship it'), 'typed the body');
    c.press('\r');
    await c.until((x) => x.includes('sent to Hana'), 'sent');
    const files = readdirSync(dir).filter((n) => n.endsWith('.signal'));
    expect(files).toHaveLength(1);
    const line = readFileSync(join(dir, files[0]!), 'utf8');
    expect(line).toContain('|from_kind:human|from_id:tester|');
    expect(line).toContain(`|to:${hana.sessionId}|ship it`);
    const own = await c.until((x) => /tester \(you\) → Hana {2}dm/.test(x) && x.includes('  ship it'), 'own message in the feed');
    expect(own).not.toContain('(you) (human)');
  });

  it('@name of a session that ended resolves through the send\'s resolver: the line and the status say it waits, and it lands in its tray (issue 21 item 1)', async () => {
    // The chat resolved @name against the live roster only: `api is not live; the draft is
    // kept`, where `attend send --to api` leaves it a message that waits.
    const api = live('api');
    await runInProcess(['send', 'going for lunch'], { env: api.env, user: PERSON });
    api.kill();
    const c = renderChat();
    await c.until((x) => x.includes('going for lunch'), 'history');
    await c.type('@apx hi');
    await c.until((x) => x.includes('── ✗ nobody known is called @apx; did you mean @api (gone)? (Tab completes)'), 'the closest known name');
    c.press('\x15');
    await c.type('@api the schema changed');
    await c.until((x) => /── to api \(gone\) — waits for api \(gone\), last seen \d+s ago/.test(x), 'the truthful words before Enter');
    c.press('\r');
    await c.until((x) => /sent to api \(gone\) — waits for api \(gone\), last seen \d+s ago/.test(x), 'sent, with the send verb\'s words');
    const dir = join(c.root, 'signals', attendKey(api.cwd));
    const lines = readdirSync(dir).filter((n) => n.endsWith('.signal')).map((n) => readFileSync(join(dir, n), 'utf8'));
    expect(lines.filter((l) => l.includes(`|to:${api.sessionId}|the schema changed`))).toHaveLength(1);
  });

  it('a human and an agent with the same name are ambiguous, with the candidates listed (issue 10 item 10)', async () => {
    const agent = live('alpha');
    // The agent was named before the person came: it keeps its name, so the two share it.
    seeLive(bus);
    writePresence(bus.root, { id: 'alpha', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
    const c = renderChat();
    await c.until((x) => x.includes('live: alpha idle waiting · alpha here'), 'both in the roster');
    await c.type('@alpha hi');
    const f = await c.until((x) => x.includes(`@alpha is ambiguous: alpha (agent ${agent.sessionId.slice(0, 8)}), alpha (human)`), 'ambiguity shown');
    expect(f).toContain('── ✗');
    c.press('\r');
    await c.until((x) => x.includes('not sent: @alpha is ambiguous'), 'refused');
    expect(readdirSync(join(c.root, 'signals'))).toEqual([]);
    // The CLI's form names the person.
    c.press('\x15');
    await c.type('@human:alpha hi');
    await c.until((x) => x.includes('── to alpha'), 'the human as the destination');
    c.press('\r');
    await c.until((x) => x.includes('sent to alpha'), 'sent');
    const tray = join(c.root, 'signals', attendKey(bus.home));
    expect(readdirSync(tray).map((n) => readFileSync(join(tray, n), 'utf8')).filter((l) => l.includes('|to:alpha|hi'))).toHaveLength(1);
  });

  it('refuses an ambiguous name with the candidates and keeps the draft', async () => {
    live('Nick-alpha');
    live('Nick-beta');
    const c = renderChat();
    await c.until((x) => x.includes('Nick-beta'), 'roster');
    await c.type('@Nick hi');
    await c.until((x) => x.includes('@Nick is ambiguous: Nick-alpha, Nick-beta'), 'ambiguity shown');
    c.press('\r');
    const f = await c.until((x) => x.includes('not sent: @Nick is ambiguous'), 'refused');
    expect(f).toContain('> @Nick hi');
  });

  it('sends to #open with nobody else live, and says they will see it when they come back (issue 10 item 12)', async () => {
    const c = renderChat();
    await c.type('anyone there?');
    await c.until((x) => x.includes('── to #open (everyone) — nobody else is live for #open now; it waits in history for whoever comes'), 'the destination says so first');
    c.press('\r');
    const f = await c.until((x) => /sent to #open \(everyone\) — nobody else is live for #open now; it waits in history for whoever comes/.test(x), 'sent, with who sees it');
    expect(f).not.toContain('> anyone there?');
    const open = join(c.root, 'signals', '_broadcast');
    const files = readdirSync(open).filter((n) => n.endsWith('.signal'));
    expect(files).toHaveLength(1);
    expect(readFileSync(join(open, files[0]!), 'utf8')).toContain('|to:*|anyone there?');
  });

  it('sends to a channel whose other member is not live, and says so', async () => {
    const nick = live('Nick');
    expect((await runInProcess(['join', 'ops'], { env: nick.env, user: PERSON })).exitCode).toBe(0);
    const c = renderChat();
    await c.type('/join #ops');
    c.press('\r');
    await c.until((x) => x.includes('joined #ops') && x.includes('Nick idle'), 'joined, Nick live');
    nick.kill();
    await c.until((x) => x.includes('live: nobody else'), 'Nick gone');
    await c.type('deploying now');
    await c.until((x) => x.includes('── to #ops — nobody else in #ops is live now; it waits in history for its 1 other member'), 'the preview before Enter');
    c.press('\r');
    // After Enter: the send verb's own delivery note, the words the CLI prints.
    await c.until((x) => /^sent to #ops — waits for Nick \(gone\), last seen \d+s ago/m.test(x), 'sent to #ops');
    const dir = join(c.root, 'signals', '@ops');
    expect(readdirSync(dir).filter((n) => n.endsWith('.signal')).map((n) => readFileSync(join(dir, n), 'utf8')).some((l) => l.endsWith('|deploying now\n'))).toBe(true);
  });

  it('refuses a channel message addressed to a non-member before Enter, as the send verb does (issue 10 item 7)', async () => {
    live('Nick');
    const c = renderChat();
    await c.type('/create #ops');
    c.press('\r');
    await c.until((x) => x.includes('created #ops') && x.includes('Nick idle'), 'created, Nick live');
    await c.type('#ops @Nick look');
    await c.until((x) => x.includes('── to #ops, to Nick — Nick is not in #ops and would never see it (/invite @Nick #ops)'), 'the refusal previewed');
    c.press('\r');
    await c.until((x) => x.includes('not sent: Nick is not in #ops'), 'refused');
    expect(existsSync(join(c.root, 'signals', '@ops')) ? readdirSync(join(c.root, 'signals', '@ops')).filter((n) => n.endsWith('.signal')) : []).toEqual([]);
  });

  it('shows a message sent by another process within the deadline, counted unread on other tabs', async () => {
    const nick = live('Nick');
    const c = renderChat();
    await c.until((x) => x.includes('Nick idle'), 'roster');
    expect((await runInProcess(['send', '--to', 'tester', 'psst, direct'], { env: nick.env, user: PERSON })).exitCode).toBe(0);
    expect((await runInProcess(['send', 'hello everyone'], { env: nick.env, user: PERSON })).exitCode).toBe(0);
    const f = await c.until((x) => x.includes('hello everyone') && x.includes('psst, direct'), 'live arrival');
    expect(f).toMatch(/#open \(1\)/);
    expect(f).toMatch(/direct \(1\)/);
    expect(f).toContain('Nick → you');
  });

  it('renders hostile bodies inert and wrapped', async () => {
    const nick = live('Nick');
    await runInProcess(['send', `\x1b[2J\x1b]0;pwned\x07 \u202Egnp.exe ${'y'.repeat(10_000)}`], { env: nick.env, user: PERSON });
    const c = renderChat();
    const f = await c.until((x) => x.includes('␛[2J'), 'neutralized body');
    expect(f).not.toMatch(/\x1b\[2J|\x1b\]0|\u202e/);
    expect(f).toContain('<U+202E>');
    expect(f).toContain('more lines');
    for (const row of f.split('\n')) expect(row.length).toBeLessThanOrEqual(100);
  });

  it('wraps wide characters by terminal columns instead of cutting them off', async () => {
    const nick = live('Nick');
    const body = `${'漢字かな'.repeat(40)}🎉end`; // 160 CJK characters (320 columns), an emoji, ASCII
    await runInProcess(['send', body], { env: nick.env, user: PERSON });
    const c = renderChat();
    const f = await c.until((x) => x.includes('end'), 'wide body');
    for (const row of f.split('\n')) expect(stringWidth(row)).toBeLessThanOrEqual(100);
    expect(f.replace(/[^漢]/g, '')).toHaveLength(40);
    expect(f).toContain('🎉end');
    // A draft of 120 columns takes two compose rows, all of it shown.
    for (let i = 0; i < 60; i++) c.press('語');
    const draft = await c.until((x) => x.replace(/[^語]/g, '').length === 60, 'wide draft on two rows');
    for (const row of draft.split('\n')) expect(stringWidth(row)).toBeLessThanOrEqual(100);
    expect(draft).toMatch(/^> 語{49}$/m);
    expect(draft).toMatch(/^ {2}語{11} ?$/m);
  });

  it('reports a malformed file and a vanished bus directory on the status line', async () => {
    const c = renderChat();
    mkdirSync(join(c.root, 'signals', '_broadcast'), { recursive: true });
    writeFileSync(join(c.root, 'signals', '_broadcast', '0zzzzzzzzzzz-bad.signal'), 'not a signal line');
    await c.until((x) => x.includes('unreadable file skipped'), 'malformed status');
    rmSync(join(c.root, 'signals'), { recursive: true, force: true });
    await c.until((x) => x.includes('is gone; waiting'), 'vanished status');
    mkdirSync(join(c.root, 'signals', '_broadcast'), { recursive: true });
    writeSignal(c.root, { kind: 'open' }, '0zzzzzzzzzzz-back', { from: `external:${PERSON}@t`, project: 'p', cwd: '/p', body: 'back again' });
    await c.until((x) => x.includes('back again'), 'recovered');
  });

  it('runs slash commands: /help, unknown, /create switches to the channel tab, /channels', async () => {
    const c = renderChat();
    await c.type('/help');
    c.press('\r');
    // The feed shows the bottom of the list: the commands' tail and every row of the key table.
    await c.until((x) => x.includes('/quit — leave attend chat') && keyHelpLines().every((l) => x.includes(`* ${l.slice(0, 60)}`)), 'help');
    await c.type('/frobnicate');
    c.press('\r');
    await c.until((x) => x.includes('unknown command /frobnicate'), 'unknown');
    c.press('\x01'); // ctrl-a
    for (let i = 0; i < 11; i++) c.press('\x1b[3~');
    await c.until((x) => !x.includes('> /frobnicate'), 'draft deleted');
    await c.type('/create #ops deploys and incidents');
    c.press('\r');
    const f = await c.until((x) => x.includes('created #ops'), 'created');
    expect(f).toMatch(/\[#ops\]/);
    expect(f).toContain('to #ops');
    await c.type('/channels');
    c.press('\r');
    await c.until((x) => x.includes('#ops (joined, pinned) — 1 member, 1 live — deploys and incidents'), 'channel list');
  });

  it('completes @names with Tab and cycles', async () => {
    live('Nick-alpha');
    live('Nick-beta');
    const c = renderChat();
    await c.until((x) => x.includes('Nick-beta'), 'roster');
    await c.type('@ni');
    c.press('\t');
    await c.until((x) => x.includes('> @Nick-alpha'), 'first completion');
    c.press('\t');
    await c.until((x) => x.includes('> @Nick-beta'), 'cycled');
  });

  it('Ctrl-W deletes the word before the cursor, Ctrl-U the line (issue 10, small things)', async () => {
    const c = renderChat();
    await c.type('ship the build');
    c.press('\x17'); // Ctrl-W
    await c.until((x) => /^> ship the\s*$/m.test(x), 'a word gone');
    for (const ch of 'release') c.press(ch);
    await c.until((x) => x.includes('> ship the release'), 'typed on');
    c.press('\x15'); // Ctrl-U
    await c.until((x) => /^>\s*$/m.test(x), 'the line gone');
  });

  it('labels a human sender once: "(human)" for others, "(you)" for the operator', async () => {
    // The other person is of another machine: on one bus there is one person (issue 20).
    const box = remoteMachine(bus, 'box', 'here');
    cleanups.push(() => box.cleanup());
    box.write({ kind: 'open' }, { fromId: 'ops-lead', fromKind: 'human', to: '*', body: 'from another human' });
    const c = renderChat();
    await c.type('mine');
    c.press('\r');
    const f = await c.until((x) => x.includes('from another human') && /tester \(you\) {2}#open/.test(x), 'both messages');
    expect(f).toMatch(/ops-lead@box \(human\) {2}#open/);
    expect(f).not.toContain('(you) (human)');
  });

  it('asks before quitting with a draft', async () => {
    const c = renderChat();
    await c.type('half a thought');
    c.press('\x1b');
    await c.until((x) => x.includes('an unsent draft would be lost'), 'confirmation');
    c.press('x');
    await c.until((x) => x.includes('half a thoughtx'), 'kept editing');
  });

  it('selects an older message with Alt-↑, shows it on the destination line, and Enter replies to it', async () => {
    const nick = live('Nick');
    const hana = live('Hana');
    expect((await runInProcess(['send', 'first from nick'], { env: nick.env, user: PERSON })).exitCode).toBe(0);
    expect((await runInProcess(['send', 'then hana'], { env: hana.env, user: PERSON })).exitCode).toBe(0);
    const open = join(bus.root, 'signals', '_broadcast');
    const [nickId, hanaId] = readdirSync(open).filter((n) => n.endsWith('.signal')).sort().map((n) => n.slice(0, -'.signal'.length));
    const c = renderChat();
    await c.until((x) => x.includes('then hana') && x.includes('Hana idle'), 'history');
    c.press('\x1b[1;3A'); // Alt-↑ as xterm and tmux send it: the newest
    await c.until((x) => /^▶ \d\d:\d\d:\d\d Hana/m.test(x) && x.includes(`reply to Hana (${hanaId})`), 'newest selected');
    c.press('\x1b\x1b[A'); // Alt-↑ as ESC-prefixed terminals send it: one older
    const sel = await c.until((x) => /^▶ \d\d:\d\d:\d\d Nick/m.test(x), 'older selected');
    expect(sel).toContain('│ first from nick');
    expect(sel).toContain('Enter replies to ▶');
    expect(sel.match(/▶/g)).toHaveLength(2); // the header and the footer's key help
    await c.type('on it');
    await c.until((x) => x.includes(`── reply to Nick (${nickId})`), 'destination says reply before Enter');
    // An address first: it goes where it says, not as a reply.
    c.press('\x01'); // Home
    for (const ch of '@Hana ') c.press(ch);
    await c.until((x) => x.includes('> @Hana on it') && x.includes('── to Hana'), 'explicit address wins');
    c.press('\x01');
    for (let i = 0; i < 6; i++) c.press('\x1b[3~');
    await c.until((x) => x.includes('> on it') && x.includes('── reply to Nick'), 'back to the reply');
    c.press('\r');
    await c.until((x) => x.includes('replied to Nick') && !/^▶/m.test(x), 'replied; the selection is done');
    const reply = readdirSync(open).filter((n) => n.endsWith('.signal')).map((n) => readFileSync(join(open, n), 'utf8')).find((l) => l.includes('|re:'));
    expect(reply).toContain(`|from_id:tester|to:${nick.sessionId}|re:${nickId}|on it`);
  });

  it('/reply answers the selection; Esc lets go of the selection before it quits', async () => {
    const nick = live('Nick');
    const hana = live('Hana');
    expect((await runInProcess(['send', 'older one'], { env: nick.env, user: PERSON })).exitCode).toBe(0);
    expect((await runInProcess(['send', 'newer one'], { env: hana.env, user: PERSON })).exitCode).toBe(0);
    const open = join(bus.root, 'signals', '_broadcast');
    const [nickId] = readdirSync(open).filter((n) => n.endsWith('.signal')).sort().map((n) => n.slice(0, -'.signal'.length));
    const c = renderChat();
    await c.until((x) => x.includes('newer one') && x.includes('Hana idle'), 'history');
    // Nothing selected: /reply answers the newest, and says so before Enter.
    await c.type('/reply');
    await c.until((x) => /── \/reply: reply to Hana \(\S+\)/.test(x), 'the newest as the /reply target');
    for (let i = 0; i < 6; i++) c.press('\x7f');
    await c.until((x) => /^>\s*$/m.test(x), 'draft cleared');
    c.press('\x1b[1;5A'); // Ctrl-↑
    c.press('\x1b[1;5A');
    await c.until((x) => /^▶ \d\d:\d\d:\d\d Nick/m.test(x), 'older selected');
    c.press('\x1b[1;5B'); // Ctrl-↓: back to the newest
    await c.until((x) => /^▶ \d\d:\d\d:\d\d Hana/m.test(x), 'newest selected');
    c.press('\x1b');
    await c.until((x) => !x.includes('▶') && x.includes('Esc quit'), 'unselected, still running');
    c.press('\x1b[1;3A');
    c.press('\x1b[1;3A');
    await c.until((x) => /^▶ \d\d:\d\d:\d\d Nick/m.test(x), 'older selected again');
    await c.type('/reply noted');
    await c.until((x) => x.includes(`── /reply: reply to Nick (${nickId})`), 'the /reply target shown before Enter');
    c.press('\r');
    await c.until((x) => x.includes('replied to Nick') && !/^▶/m.test(x), 'replied');
    const reply = readdirSync(open).filter((n) => n.endsWith('.signal')).map((n) => readFileSync(join(open, n), 'utf8')).find((l) => l.includes('|re:'));
    expect(reply).toContain(`|to:${nick.sessionId}|re:${nickId}|noted`);
  });

  it('colours names at 256 colours', async () => {
    const nick = live('Nick');
    await runInProcess(['send', 'tinted'], { env: nick.env, user: PERSON });
    const c = renderChat({ depth: 2 });
    const f = await c.until((x) => x.includes('tinted'), 'render');
    // Chalk's level follows the test's stdout; the colour prop must at least not break text.
    expect(f).toContain('Nick');
  });
});
