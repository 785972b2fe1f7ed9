// Frames of the main screens through ink-testing-library, on a real temporary bus with a
// real live session (fakeSession) and the real actions.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import stringWidth from 'string-width';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createChatActions } from '../tools/chat/actions.js';
import { App } from '../tools/chat/App.js';
import { createBusSource } from '../tools/chat/bus-source.js';
import { createVerbCtx } from '../tools/verbs/context.js';
import { writeSignal } from '../tools/bus/signals.js';
import { writePresence } from '../tools/bus/presence.js';
import { attendKey } from '../tools/wire/names.js';
import { type FakeSession, fakeSession, makeTempBus, runInProcess, type TempBus, waitFor } from './helpers/bus.js';

let bus: TempBus;
let sessions: FakeSession[] = [];
let unmounts: (() => void)[] = [];

beforeEach(() => {
  bus = makeTempBus();
  sessions = [];
  unmounts = [];
});
afterEach(() => {
  for (const u of unmounts) u();
  for (const s of sessions) s.kill();
  bus.cleanup();
});

function renderChat(opts: { depth?: 0 | 1 | 2 | 3 } = {}) {
  const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human' });
  const root = makeCtx().root();
  // What start-chat's heartbeat does, so the operator is live for others to address.
  writePresence(root, { id: 'tester', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
  const source = createBusSource({ root, rescanMs: 200 });
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
  it('shows tabs, history, the roster and the status line without colour under NO_COLOR', async () => {
    const nick = live('Nick');
    await runInProcess(['send', 'first words'], { env: nick.env });
    const c = renderChat();
    const f = await c.until((x) => x.includes('first words') && x.includes('Nick idle'), 'history and roster');
    expect(f).toMatch(/\[merged\] {2}#open {3}direct/);
    expect(f).toMatch(/\d\d:\d\d:\d\d Nick {2}#open/);
    expect(f).toContain('to #open (everyone)');
    expect(f).toContain('Esc quit');
    // Nothing delivers to Nick (no sensor heartbeat, no drain): the roster says so.
    expect(f).toContain('Nick idle deaf');
    expect(f).not.toContain('\x1b[');
  });

  it('sends to a fuzzy-matched @name and writes the signal file as the human', async () => {
    const hana = live('Hana');
    writePresence(bus.root, { id: hana.sessionId, kind: 'agent', origin: hana.cwd, heartbeat: Date.now(), role: 'sensor', pid: hana.pid });
    const c = renderChat();
    const roster = await c.until((x) => x.includes('Hana idle'), 'roster');
    expect(roster).not.toContain('deaf');
    await c.type('@hanna ship it');
    await c.until((x) => x.includes('to Hana'), 'destination shown before Enter');
    c.press('\r');
    await c.until((x) => x.includes('sent to Hana'), 'sent');
    const dir = join(c.root, 'signals', attendKey(hana.cwd));
    const files = readdirSync(dir).filter((n) => n.endsWith('.signal'));
    expect(files).toHaveLength(1);
    const line = readFileSync(join(dir, files[0]!), 'utf8');
    expect(line).toContain('|from_kind:human|from_id:tester|');
    expect(line).toContain(`|to:${hana.sessionId}|ship it`);
    await c.until((x) => /tester \(you\) \(human\) → Hana {2}dm/.test(x) && x.includes('  ship it'), 'own message in the feed');
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

  it('refuses a send that reaches nobody live and keeps the draft', async () => {
    const c = renderChat();
    await c.type('anyone there?');
    c.press('\r');
    const f = await c.until((x) => x.includes('not sent: nobody else is live'), 'refusal');
    expect(f).toContain('> anyone there?');
    expect(readdirSync(join(c.root, 'signals'))).toEqual([]);
  });

  it('shows a message sent by another process within the deadline, counted unread on other tabs', async () => {
    const nick = live('Nick');
    const c = renderChat();
    await c.until((x) => x.includes('Nick idle'), 'roster');
    expect((await runInProcess(['send', '--to', 'tester', 'psst, direct'], { env: nick.env })).exitCode).toBe(0);
    expect((await runInProcess(['send', 'hello everyone'], { env: nick.env })).exitCode).toBe(0);
    const f = await c.until((x) => x.includes('hello everyone') && x.includes('psst, direct'), 'live arrival');
    expect(f).toMatch(/#open \(1\)/);
    expect(f).toMatch(/direct \(1\)/);
    expect(f).toContain('Nick → you');
  });

  it('renders hostile bodies inert and wrapped', async () => {
    const nick = live('Nick');
    await runInProcess(['send', `\x1b[2J\x1b]0;pwned\x07 \u202Egnp.exe ${'y'.repeat(10_000)}`], { env: nick.env });
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
    await runInProcess(['send', body], { env: nick.env });
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
    writeSignal(c.root, { kind: 'open' }, '0zzzzzzzzzzz-back', { from: 'external:x@t', project: 'p', cwd: '/p', body: 'back again' });
    await c.until((x) => x.includes('back again'), 'recovered');
  });

  it('runs slash commands: /help, unknown, /create switches to the channel tab, /channels', async () => {
    const c = renderChat();
    await c.type('/help');
    c.press('\r');
    // The feed shows the bottom of the list: the commands' tail and the keys.
    await c.until((x) => x.includes('/reply [text] — reply to the selected message') && x.includes('Alt-↑/↓ (or Ctrl-↑/↓) select a message'), 'help');
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
    expect((await runInProcess(['send', 'first from nick'], { env: nick.env })).exitCode).toBe(0);
    expect((await runInProcess(['send', 'then hana'], { env: hana.env })).exitCode).toBe(0);
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
    expect((await runInProcess(['send', 'older one'], { env: nick.env })).exitCode).toBe(0);
    expect((await runInProcess(['send', 'newer one'], { env: hana.env })).exitCode).toBe(0);
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
    await runInProcess(['send', 'tinted'], { env: nick.env });
    const c = renderChat({ depth: 2 });
    const f = await c.until((x) => x.includes('tinted'), 'render');
    // Chalk's level follows the test's stdout; the colour prop must at least not break text.
    expect(f).toContain('Nick');
  });
});
