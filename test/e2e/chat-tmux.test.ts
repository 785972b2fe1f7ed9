// attend chat in a real terminal: tmux drives keys (send-keys) and reads the screen
// (capture-pane). Needs tmux; CI installs it through .ci/run.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, ME, type FakeSession, fakeSession, makeTempBus, runBin, type TempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
let nick: FakeSession;
let socket: string;

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const screen = () => tmux('capture-pane', '-p', '-t', 'chat');

// tmux 3.3 sometimes leaves the exited chat a zombie with no pane_dead_status, so the pane
// runs a shell that waits for attend and writes its exit status to a file.
let statusFile: string;
function startChat(env: Record<string, string>, cols: number, rows: number, args: string[] = []): void {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  // A tmux server passes on the environment of whoever started it: Claude Code's variables
  // from a session running these tests would make the chat that session's, and refused.
  const unset = ['CLAUDECODE', 'CLAUDE_PID', 'CLAUDE_CODE_SESSION_ID'].flatMap((k) => ['-u', k]);
  tmux('new-session', '-d', '-x', String(cols), '-y', String(rows), '-s', 'chat', 'env', ...unset, ...vars, 'sh', '-c', `"$0" "$@"; echo $? > '${statusFile}'`, process.execPath, BIN, 'chat', ...args);
  // Keep the pane after the command exits, to read what it left behind.
  tmux('set-option', '-t', 'chat', 'remain-on-exit', 'on');
}
const exitStatus = (what: string) => waitFor(() => existsSync(statusFile) && readFileSync(statusFile, 'utf8').trim(), { what, timeoutMs: 10_000 });
/** The chat process: the pane's shell's one child. */
function chatPid(): number {
  const sh = tmux('display-message', '-p', '-t', 'chat', '#{pane_pid}').trim();
  return Number(readFileSync(`/proc/${sh}/task/${sh}/children`, 'utf8').trim().split(/\s+/)[0]);
}

beforeEach(() => {
  bus = makeTempBus();
  nick = fakeSession(bus, { name: 'Nick' });
  socket = `attend-chat-${process.pid}-${Date.now()}`;
  statusFile = join(bus.dir, 'chat-exit-status');
});
afterEach(() => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  nick.kill();
  bus.cleanup();
});

async function until(pred: (s: string) => boolean, what: string): Promise<string> {
  let last = '';
  try {
    return await waitFor(() => {
      last = screen();
      return pred(last) && last;
    }, { what, timeoutMs: 10_000, intervalMs: 50 });
  } catch {
    throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
  }
}

describe('attend chat in tmux', () => {
  it('sends, receives, holds its layout on resize, and restores the terminal on quit', async () => {
    startChat({ ...bus.env, TERM: 'xterm-256color' }, 100, 30);
    await until((s) => s.includes('Esc quit') && s.includes('Nick idle'), 'first frame with the roster');
    const presence = join(bus.root, 'state', 'presence', `${ME}~chat.json`);
    expect(existsSync(presence)).toBe(true);

    tmux('send-keys', '-t', 'chat', '-l', 'hello from tmux');
    await until((s) => s.includes('> hello from tmux') && s.includes('to #open (everyone)'), 'draft and destination');
    tmux('send-keys', '-t', 'chat', 'Enter');
    const open = join(bus.root, 'signals', '_broadcast');
    const file = await waitFor(() => existsSync(open) && readdirSync(open).find((n) => n.endsWith('.signal')), { what: 'signal file', timeoutMs: 10_000 });
    const line = readFileSync(join(open, file), 'utf8');
    expect(line).toMatch(new RegExp(`^external:${ME}@[^|]+\\|[^|]*\\|[^|]*\\|from_kind:human\\|from_id:${ME}\\|to:\\*\\|hello from tmux\\n$`));

    const sent = runBin(['send', 'from another process'], { env: nick.env });
    expect(sent.exitCode).toBe(0);
    await until((s) => s.includes('from another process') && /Nick {2}#open/.test(s), 'message from another process');

    tmux('resize-window', '-t', 'chat', '-x', '60', '-y', '16');
    const small = await until((s) => s.split('\n').some((l) => l.startsWith('── to #open')) && s.includes('live: Nick') && s.includes('[merged]'), 'layout after resize');
    const rows = small.split('\n');
    expect(rows.filter((r) => r.includes('[merged]  #open'))).toHaveLength(1);
    expect(rows.filter((r) => r.startsWith('sent to #open'))).toHaveLength(1);
    expect(rows.filter((r) => r.startsWith('live: Nick'))).toHaveLength(1);
    for (const r of rows) expect(Array.from(r).length).toBeLessThanOrEqual(60);
    expect(small).toContain('from another process');

    tmux('send-keys', '-t', 'chat', 'Escape');
    expect(await exitStatus('chat to exit')).toBe('0');
    // Back on the normal screen: the alternate screen and its frame are gone.
    expect(screen()).not.toContain('Esc quit');
    expect(existsSync(presence)).toBe(false);
  });

  it('sends to #open with nobody else live and says they will see it when they come back (issue 10 item 12)', async () => {
    nick.kill();
    startChat(bus.env, 100, 24);
    await until((s) => s.includes('live: nobody else'), 'first frame, alone');
    tmux('send-keys', '-t', 'chat', '-l', 'anyone there?');
    await until((s) => s.includes('> anyone there?') && s.includes('── to #open (everyone) — nobody else is live for #open now; it waits in history for whoever comes'), 'draft and the note');
    tmux('send-keys', '-t', 'chat', 'Enter');
    const open = join(bus.root, 'signals', '_broadcast');
    const file = await waitFor(() => existsSync(open) && readdirSync(open).find((n) => n.endsWith('.signal')), { what: 'signal file', timeoutMs: 10_000 });
    expect(readFileSync(join(open, file), 'utf8')).toMatch(/\|to:\*\|anyone there\?\n$/);
    await until((s) => s.split('\n').some((l) => l.startsWith('sent to #open (everyone) — nobody else is live for #open now; it waits in history for whoever comes')), 'status after sending');
  });

  it('Ctrl-W and Ctrl-U edit the draft as a terminal sends them', async () => {
    startChat(bus.env, 80, 24);
    await until((s) => s.includes('Enter send'), 'first frame');
    tmux('send-keys', '-t', 'chat', '-l', 'ship the build');
    await until((s) => s.includes('> ship the build'), 'draft');
    tmux('send-keys', '-t', 'chat', 'C-w');
    await until((s) => /^> ship the\s*$/m.test(s), 'a word gone');
    tmux('send-keys', '-t', 'chat', 'C-u');
    await until((s) => /^>\s*$/m.test(s), 'the line gone');
    // Nothing was sent: the keys edited, they did not submit.
    expect(existsSync(join(bus.root, 'signals', '_broadcast'))).toBe(false);
  });

  it('restores the terminal and removes its heartbeat on SIGTERM', async () => {
    startChat(bus.env, 80, 24);
    await until((s) => s.includes('Enter send'), 'first frame');
    const pid = chatPid();
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain(`${BIN}\0chat`);
    process.kill(pid, 'SIGTERM');
    expect(await exitStatus('exit on SIGTERM')).toBe('143');
    expect(screen()).not.toContain('Enter send');
    expect(existsSync(join(bus.root, 'state', 'presence', `${ME}~chat.json`))).toBe(false);
  });

  it('Alt-↑ selects an older message and Enter replies to it: re: is its id, to: its sender', async () => {
    const hana = fakeSession(bus, { name: 'Hana' });
    try {
      expect(runBin(['send', 'nick asks first'], { env: nick.env }).exitCode).toBe(0);
      expect(runBin(['send', 'hana says later'], { env: hana.env }).exitCode).toBe(0);
      const open = join(bus.root, 'signals', '_broadcast');
      const [nickId, hanaId] = readdirSync(open).filter((n) => n.endsWith('.signal')).sort().map((n) => n.slice(0, -'.signal'.length));
      startChat({ ...bus.env, TERM: 'xterm-256color' }, 100, 24);
      await until((s) => s.includes('hana says later') && s.includes('Hana idle'), 'first frame');
      // tmux sends M-Up as ESC[1;3A.
      tmux('send-keys', '-t', 'chat', 'M-Up');
      await until((s) => /^▶ \d\d:\d\d:\d\d Hana/m.test(s), 'the newest selected');
      tmux('send-keys', '-t', 'chat', 'M-Up');
      const sel = await until((s) => /^▶ \d\d:\d\d:\d\d Nick/m.test(s) && s.includes('│ nick asks first'), 'the older selected');
      expect(sel).toContain(`── reply to Nick (${nickId})`);
      // Plain ↑ still recalls history (empty here) and leaves the selection alone.
      tmux('send-keys', '-t', 'chat', 'Up');
      tmux('send-keys', '-t', 'chat', '-l', 'got it');
      await until((s) => s.includes('> got it') && s.includes(`── reply to Nick (${nickId})`), 'draft with the reply destination');
      tmux('send-keys', '-t', 'chat', 'Enter');
      const line = await waitFor(
        () => readdirSync(open).map((n) => (n.endsWith('.signal') ? readFileSync(join(open, n), 'utf8') : '')).find((l) => l.includes('|re:')),
        { what: 'the reply on disk', timeoutMs: 10_000 },
      );
      expect(line).toMatch(new RegExp(`\\|from_kind:human\\|from_id:${ME}\\|to:${nick.sessionId}\\|re:${nickId}\\|got it\\n$`));
      expect(line).not.toContain(hanaId);
      await until((s) => s.includes('replied to Nick') && !/^▶/m.test(s), 'status after the reply, selection gone');
      // Esc with a selection lets go; the next Esc quits.
      tmux('send-keys', '-t', 'chat', 'M-Up');
      await until((s) => /^▶/m.test(s), 'selected again');
      tmux('send-keys', '-t', 'chat', 'Escape');
      await until((s) => !/^▶/m.test(s) && s.includes('live: Hana'), 'unselected, still open');
      expect(existsSync(statusFile)).toBe(false);
      tmux('send-keys', '-t', 'chat', 'Escape');
      expect(await exitStatus('chat to exit')).toBe('0');
    } finally {
      hana.kill();
    }
  });

  it('Alt-↑ starts at the newest message of another party; a reply to your own message threads to its addressees, not to you', async () => {
    expect(runBin(['send', 'nick asks first'], { env: nick.env }).exitCode).toBe(0);
    const open = join(bus.root, 'signals', '_broadcast');
    const [nickId] = readdirSync(open).filter((n) => n.endsWith('.signal')).sort().map((n) => n.slice(0, -'.signal'.length));
    startChat({ ...bus.env, TERM: 'xterm-256color' }, 100, 24);
    await until((s) => s.includes('nick asks first') && s.includes('Nick idle'), 'first frame');
    tmux('send-keys', '-t', 'chat', '-l', '@Nick my own note');
    await until((s) => s.includes('> @Nick my own note') && s.includes('── to Nick'), 'the draft to Nick');
    tmux('send-keys', '-t', 'chat', 'Enter');
    await until((s) => s.includes('sent to Nick'), 'sent to Nick');
    const tray = () => readdirSync(join(bus.root, 'signals')).filter((d) => d !== '_broadcast' && !d.startsWith('.'));
    const mine = await waitFor(() => tray().flatMap((d) => readdirSync(join(bus.root, 'signals', d)).filter((n) => n.endsWith('.signal')).map((n) => n.slice(0, -'.signal'.length)))[0], { what: 'my direct message', timeoutMs: 10_000 });
    await until((s) => s.includes('my own note'), 'my message in the feed');
    // Newest is my own; the first Alt-↑ picks Nick's, the one to answer.
    tmux('send-keys', '-t', 'chat', 'M-Up');
    await until((s) => /^▶ \d\d:\d\d:\d\d Nick/m.test(s), 'Nick’s message selected first');
    // Alt-↓ reaches my own; a reply to it goes to Nick, whom it was for.
    tmux('send-keys', '-t', 'chat', 'M-Down');
    const own = await until((s) => /^▶ \d\d:\d\d:\d\d \S+ \(you\)/m.test(s), 'my own message selected');
    expect(own).toContain(`── reply to Nick (${mine})`);
    tmux('send-keys', '-t', 'chat', '-l', 'and a follow-up');
    tmux('send-keys', '-t', 'chat', 'Enter');
    const reply = await waitFor(
      () => tray().flatMap((d) => readdirSync(join(bus.root, 'signals', d)).map((n) => readFileSync(join(bus.root, 'signals', d, n), 'utf8'))).find((l) => l.includes(`|re:${mine}`)),
      { what: 'the follow-up on disk', timeoutMs: 10_000 },
    );
    expect(reply).toMatch(new RegExp(`\\|from_id:${ME}\\|to:${nick.sessionId}\\|re:${mine}\\|and a follow-up\\n$`));
    const after = await until((s) => s.includes('and a follow-up') && s.includes('replied to Nick') && !/^▶/m.test(s), 'the follow-up in the feed');
    // The person running the chat is live: nothing says it waits for them or that they are not live.
    expect(after).not.toMatch(/not live|waits for you|waits for ${ME}/);
    expect(nickId).toBeDefined();
    tmux('send-keys', '-t', 'chat', 'Escape');
    expect(await exitStatus('chat to exit')).toBe('0');
  });

  it('long lines wrap at word boundaries, not mid-word', async () => {
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu';
    expect(runBin(['send', words], { env: nick.env }).exitCode).toBe(0);
    startChat({ ...bus.env, TERM: 'xterm-256color' }, 60, 24);
    const s = await until((x) => x.includes('zulu') && x.includes('Nick idle'), 'the long message');
    const rows = s.split('\n');
    const body = rows.slice(rows.findIndex((r) => r.includes('alpha')), rows.findIndex((r) => r.includes('zulu')) + 1);
    expect(body.length).toBeGreaterThan(1);
    // Every word of the message is whole on some row.
    const onScreen = new Set(body.flatMap((r) => r.split(/[\s│]+/)));
    for (const w of words.split(' ')) expect(onScreen.has(w), `${w} in:\n${body.join('\n')}`).toBe(true);
    tmux('send-keys', '-t', 'chat', 'Escape');
    expect(await exitStatus('chat to exit')).toBe('0');
  });

  it('mouse reporting is off by default (terminal selection works); with --mouse the wheel scrolls the feed', async () => {
    for (let i = 0; i < 60; i++) expect(runBin(['send', `numbered message ${String(i).padStart(2, '0')}`], { env: nick.env }).exitCode).toBe(0);
    startChat(bus.env, 80, 20);
    await until((s) => s.includes('numbered message 59'), 'first frame');
    expect(tmux('display-message', '-p', '-t', 'chat', '#{mouse_sgr_flag}#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}').trim()).toBe('0000');
    tmux('send-keys', '-t', 'chat', 'Escape');
    expect(await exitStatus('chat to exit')).toBe('0');
    tmux('kill-server');
    // A fresh server: kill-server returns before the old one has let go of its socket, and a
    // new-session on the same socket then fails with "server exited unexpectedly".
    socket = `${socket}-mouse`;

    startChat(bus.env, 80, 20, ['--mouse']);
    await until((s) => s.includes('numbered message 59'), 'first frame with --mouse');
    expect(tmux('display-message', '-p', '-t', 'chat', '#{mouse_sgr_flag}').trim()).toBe('1');
    // Wheel up, as an SGR mouse report (button 64), a few notches.
    for (let i = 0; i < 6; i++) tmux('send-keys', '-t', 'chat', '-l', '\x1b[<64;10;5M');
    const scrolled = await until((s) => !s.includes('numbered message 59') && /numbered message [0-4]\d/.test(s), 'the feed scrolled back');
    expect(scrolled).not.toContain('numbered message 59');
    // Wheel down brings the newest back.
    for (let i = 0; i < 12; i++) tmux('send-keys', '-t', 'chat', '-l', '\x1b[<65;10;5M');
    await until((s) => s.includes('numbered message 59'), 'back at the newest');
  });
});
