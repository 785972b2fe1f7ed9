// attend chat in a real terminal: tmux drives keys (send-keys) and reads the screen
// (capture-pane). Needs tmux; CI installs it through .ci/run.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type FakeSession, fakeSession, makeTempBus, runBin, type TempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
let nick: FakeSession;
let socket: string;

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const screen = () => tmux('capture-pane', '-p', '-t', 'chat');

beforeEach(() => {
  bus = makeTempBus();
  nick = fakeSession(bus, { name: 'Nick' });
  socket = `attend-chat-${process.pid}-${Date.now()}`;
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
    const env = Object.entries({ ...bus.env, TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${v}`);
    tmux('new-session', '-d', '-x', '100', '-y', '30', '-s', 'chat', 'env', ...env, process.execPath, BIN, 'chat');
    // Keep the pane after the command exits, to read what it left behind.
    tmux('set-option', '-t', 'chat', 'remain-on-exit', 'on');
    await until((s) => s.includes('Esc quit') && s.includes('Nick idle'), 'first frame with the roster');
    const presence = join(bus.root, 'state', 'presence', 'tester~chat.json');
    expect(existsSync(presence)).toBe(true);

    tmux('send-keys', '-t', 'chat', '-l', 'hello from tmux');
    await until((s) => s.includes('> hello from tmux') && s.includes('to #open (everyone)'), 'draft and destination');
    tmux('send-keys', '-t', 'chat', 'Enter');
    const open = join(bus.root, 'signals', '_broadcast');
    const file = await waitFor(() => existsSync(open) && readdirSync(open).find((n) => n.endsWith('.signal')), { what: 'signal file', timeoutMs: 10_000 });
    const line = readFileSync(join(open, file), 'utf8');
    expect(line).toMatch(/^external:tester@[^|]+\|[^|]*\|[^|]*\|from_kind:human\|from_id:tester\|to:\*\|hello from tmux\n$/);

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
    await waitFor(() => tmux('display-message', '-p', '-t', 'chat', '#{pane_dead}').trim() === '1', { what: 'chat to exit', timeoutMs: 10_000 });
    expect(tmux('display-message', '-p', '-t', 'chat', '#{pane_dead_status}').trim()).toBe('0');
    // Back on the normal screen: the alternate screen and its frame are gone.
    expect(screen()).not.toContain('Esc quit');
    expect(existsSync(presence)).toBe(false);
  });

  it('restores the terminal and removes its heartbeat on SIGTERM', async () => {
    const env = Object.entries(bus.env).map(([k, v]) => `${k}=${v}`);
    tmux('new-session', '-d', '-x', '80', '-y', '24', '-s', 'chat', 'env', ...env, process.execPath, BIN, 'chat');
    tmux('set-option', '-t', 'chat', 'remain-on-exit', 'on');
    await until((s) => s.includes('Enter send'), 'first frame');
    // `env` execs node, so the pane's process is the chat itself.
    const pid = Number(tmux('display-message', '-p', '-t', 'chat', '#{pane_pid}').trim());
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGTERM');
    await waitFor(() => tmux('display-message', '-p', '-t', 'chat', '#{pane_dead}').trim() === '1', { what: 'exit on SIGTERM', timeoutMs: 10_000 });
    expect(tmux('display-message', '-p', '-t', 'chat', '#{pane_dead_status}').trim()).toBe('143');
    expect(screen()).not.toContain('Enter send');
    expect(existsSync(join(bus.root, 'state', 'presence', 'tester~chat.json'))).toBe(false);
  });
});
