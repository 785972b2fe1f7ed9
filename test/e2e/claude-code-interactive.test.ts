// The plugin in an interactive Claude Code, in a real terminal (tmux): the plugin's own
// monitor (monitors/monitors.json) starts `attend run` with no model involved, and on a quiet
// bus it costs nothing — the model is not woken until a message worth a wake arrives, and
// then that message is the first thing it sees (issue #11 §7). A start line printed at once
// would race the message here (Monitor batches lines within 200 ms), so this test catches
// it only sometimes; test/e2e/sensor.test.ts proves the silence deterministically.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { runBin, waitFor } from '../helpers/bus.js';
import { type ClaudeHome, claudeBinary, makeClaudeHome } from '../helpers/claude-code.js';
import { type FakeAnthropic, conversationText, startFakeAnthropic } from '../helpers/fake-anthropic.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
let socket: string | undefined;
let claudePid: number | undefined;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket!, ...args], { encoding: 'utf8' });

afterEach(async () => {
  try {
    if (socket) tmux('kill-server');
  } catch {
    // already gone
  }
  // The session goes with its terminal; wait for it before its home is removed under it.
  const pid = claudePid;
  if (pid !== undefined) await waitFor(() => !existsSync(`/proc/${pid}`), { timeoutMs: 15_000, what: 'claude to exit' }).catch(() => process.kill(pid, 'SIGKILL'));
  await api?.close();
  home?.cleanup();
  home = api = socket = claudePid = undefined;
});

/** The one running session's record. */
function sessionRecord(h: ClaudeHome): { sessionId: string; pid: number } | undefined {
  const dir = join(h.claudeDir, 'sessions');
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

describe('claude code plugin, interactive', () => {
  it("the plugin's monitor starts attend run, which wakes the model only with the first message", async () => {
    const h = (home = makeClaudeHome());
    // A trusted project and an approved key, so no dialog stands between the session and its plugins.
    writeFileSync(
      join(h.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        customApiKeyResponses: { approved: ['sk-ant-test'], rejected: [] },
        projects: { [h.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      }),
    );
    api = await startFakeAnthropic(() => ({ text: 'noted' }));
    const env = h.env({ baseUrl: api.url, attendOnPath: false });
    socket = `attend-cc-${process.pid}-${Date.now()}`;
    const vars = Object.entries({ ...env, TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${v}`);
    tmux('new-session', '-d', '-x', '160', '-y', '40', '-s', 'cc', '-c', h.project, 'env', ...vars, claudeBinary(), '--plugin-dir', REPO);
    const screen = () => tmux('capture-pane', '-p', '-t', 'cc');
    const until = async <T>(fn: () => T | undefined | null | false, what: string): Promise<T> => {
      try {
        return await waitFor(fn, { timeoutMs: 60_000, what });
      } catch (err) {
        throw new Error(`${(err as Error).message}; screen:\n${screen()}`);
      }
    };
    const rec = await until(() => sessionRecord(h), 'the session record');
    claudePid = rec.pid;
    const sid = rec.sessionId;
    // The plugin's monitor is up when the session's sensor claim names a live process.
    await until(() => readSensor(h.root, sid) !== null, 'the sensor claim');
    expect(api.requests).toEqual([]);
    const sent = runBin(['send', '--to', sid, 'interactive-payload-5e1d'], { env: { PATH: env.PATH!, HOME: h.home, ATTEND_HOME: h.root }, cwd: h.dir });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const first = await until(() => api!.requests[0], 'a model request');
    // Nothing woke the model before the message did.
    expect(conversationText(first)).toContain('interactive-payload-5e1d');
    expect(conversationText(first)).toMatch(/\[attend\] sensor started for /);
  }, 240_000);
});
