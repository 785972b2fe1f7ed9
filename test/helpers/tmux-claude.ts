// An interactive Claude Code in a real terminal: the pinned binary in a tmux session of its
// own (its own server socket, -L), in a ClaudeHome, against the scripted Messages API server.
// The test waits on conditions (the session record, the bus, the requests) with the screen in
// the failure message; `stop` ends the terminal and waits for the session to go with it.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './bus.js';
import { type ClaudeHome, claudeBinary } from './claude-code.js';

export interface TmuxClaude {
  screen(): string;
  /** waitFor, with the screen in the error. */
  until<T>(fn: () => T | undefined | null | false, what: string, timeoutMs?: number): Promise<T>;
  /** The running session's record (pid, session id), once Claude Code has written it. */
  session(): Promise<{ sessionId: string; pid: number }>;
  /** The session's status now, as its record says (`busy`, `idle`), once `session` has resolved. */
  status(): string | undefined;
  stop(): Promise<void>;
}

/** The one running session's record. */
function sessionRecord(h: ClaudeHome): { sessionId: string; pid: number } | undefined {
  const dir = join(h.claudeDir, 'sessions');
  if (!existsSync(dir)) return undefined;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    try {
      const rec = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { sessionId?: unknown; pid?: unknown };
      if (typeof rec.sessionId === 'string' && typeof rec.pid === 'number') return { sessionId: rec.sessionId, pid: rec.pid };
    } catch {
      // being written
    }
  }
  return undefined;
}

/** Start `claude <args>` in a 160×40 terminal in the project, with a trusted project and an approved key (no dialog). */
export function startTmuxClaude(h: ClaudeHome, env: Record<string, string>, args: string[] = []): TmuxClaude {
  writeFileSync(
    join(h.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: ['sk-ant-test'], rejected: [] },
      projects: { [h.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
  const socket = `attend-cc-${process.pid}-${Date.now()}`;
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' });
  const vars = Object.entries({ ...env, TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${v}`);
  tmux('new-session', '-d', '-x', '160', '-y', '40', '-s', 'cc', '-c', h.project, 'env', ...vars, claudeBinary(), ...args);
  const screen = () => {
    try {
      return tmux('capture-pane', '-p', '-t', 'cc');
    } catch {
      return '(no terminal)';
    }
  };
  const until = async <T>(fn: () => T | undefined | null | false, what: string, timeoutMs = 60_000): Promise<T> => {
    try {
      return await waitFor(fn, { timeoutMs, what });
    } catch (err) {
      throw new Error(`${(err as Error).message}; screen:\n${screen()}`);
    }
  };
  let pid: number | undefined;
  return {
    screen,
    until,
    session: async () => {
      const rec = await until(() => sessionRecord(h), 'the session record');
      pid = rec.pid;
      return rec;
    },
    status: () => {
      if (pid === undefined) return undefined;
      try {
        const rec = JSON.parse(readFileSync(join(h.claudeDir, 'sessions', `${pid}.json`), 'utf8')) as { status?: unknown };
        return typeof rec.status === 'string' ? rec.status : undefined;
      } catch {
        return undefined; // being written, or gone
      }
    },
    stop: async () => {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
      // The session goes with its terminal; wait for it before its home is removed under it.
      const p = pid;
      if (p !== undefined) await waitFor(() => !existsSync(`/proc/${p}`), { timeoutMs: 15_000, what: 'claude to exit' }).catch(() => process.kill(p, 'SIGKILL'));
    },
  };
}
