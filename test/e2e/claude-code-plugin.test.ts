// The repo as a Claude Code plugin (--plugin-dir), in a real Claude Code: the SessionStart hook
// registers presence and tells the model about attend, the presence is gone after the session
// ends, the plugin's .mcp.json serves `send` with the session's identity, and without attend the
// plugin does nothing, quietly (issue #6 §1, §3, §5).

import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readPresence } from '../../tools/bus/presence.js';
import { listLive } from '../../tools/bus/roster.js';
import { procInfoFromProc } from '../../tools/identity/system.js';
import { parseSignal } from '../../tools/wire/envelope.js';
import { waitFor } from '../helpers/bus.js';
import { type ClaudeHome, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type FakeAnthropic, conversationText, startFakeAnthropic, toolResultCount } from '../helpers/fake-anthropic.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MCP_SEND = 'mcp__plugin_attend_attend__send';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
afterEach(async () => {
  await api?.close();
  home?.cleanup();
  home = api = undefined;
});

function roster(h: ClaudeHome) {
  return listLive({ root: h.root, sessionsDir: join(h.claudeDir, 'sessions'), now: Date.now(), procInfo: procInfoFromProc });
}

describe('claude code plugin', () => {
  it('SessionStart puts the session in the live roster while it runs; it is gone after it ends', async () => {
    const h = (home = makeClaudeHome());
    const go = join(h.dir, 'go');
    api = await startFakeAnthropic((req) =>
      toolResultCount(req) === 0
        ? { tool: 'Bash', input: { command: `while [ ! -f ${go} ]; do sleep 0.05; done; echo RELEASED`, description: 'wait' } }
        : { text: 'done' },
    );
    // attend is not on PATH: the hooks run the plugin's own build.
    const run = runClaude(['-p', 'go', '--plugin-dir', REPO, '--allowedTools', 'Bash', '--output-format', 'json'], { env: h.env({ baseUrl: api.url, attendOnPath: false }), cwd: h.project });
    try {
      const peer = await waitFor(() => roster(h).find((p) => p.presence.some((r) => r.role === 'session' && r.pid === run.pid)), { timeoutMs: 30_000, what: 'the session in the roster' });
      expect(peer.kind).toBe('agent');
      expect(peer.origin).toBe(h.project);
      expect(peer.record?.pid).toBe(run.pid);
      writeFileSync(go, '');
      const code = await run.exited(60_000);
      expect(code, run.stderr()).toBe(0);
      const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
      expect(peer.id).toBe(session_id);
      expect(conversationText(api.requests[0]!)).toContain(`attend is available`);
      expect(conversationText(api.requests[0]!)).toContain(`(session ${session_id})`);
      expect(roster(h).find((p) => p.id === session_id)).toBeUndefined();
      expect(readPresence(h.root).filter((p) => p.id === session_id)).toEqual([]);
    } finally {
      run.kill();
    }
  });

  it("the plugin's .mcp.json serves send, writing an envelope with the session's identity", async () => {
    const h = (home = makeClaudeHome());
    api = await startFakeAnthropic((req) => {
      const step = toolResultCount(req);
      if (step === 0) return { tool: 'ToolSearch', input: { query: `select:${MCP_SEND}` } };
      if (step === 1) return { tool: MCP_SEND, input: { message: 'hello over mcp' } };
      return { text: 'done' };
    });
    const run = runClaude(['-p', 'go', '--plugin-dir', REPO, '--allowedTools', `ToolSearch,${MCP_SEND}`, '--output-format', 'json'], { env: h.env({ baseUrl: api.url, attendOnPath: false }), cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
    const last = conversationText(api.requests.at(-1)!);
    const dir = join(h.root, 'signals', '_broadcast');
    expect(existsSync(dir), last.slice(-1500)).toBe(true);
    const files = readdirSync(dir).filter((f) => f.endsWith('.signal'));
    expect(files).toHaveLength(1);
    const env = parseSignal(readFileSync(join(dir, files[0]!), 'utf8').trimEnd());
    expect(env).toMatchObject({ fromKind: 'agent', fromId: session_id, from: `claude:${session_id}`, to: '*', body: 'hello over mcp' });
    // The tool result the model saw names the message it wrote.
    expect(last).toContain(files[0]!.replace(/\.signal$/, ''));
  });

  it('without attend anywhere, the plugin does nothing and the session runs normally', async () => {
    const h = (home = makeClaudeHome());
    // A plugin copy without a build, and no attend on PATH.
    const plugin = join(h.dir, 'plugin');
    mkdirSync(plugin);
    for (const p of ['.claude-plugin', 'hooks', 'monitors', 'skills', '.mcp.json']) cpSync(join(REPO, p), join(plugin, p), { recursive: true });
    api = await startFakeAnthropic(() => ({ text: 'done' }));
    const run = runClaude(['-p', 'go', '--plugin-dir', plugin, '--output-format', 'json'], { env: h.env({ baseUrl: api.url, attendOnPath: false }), cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    expect(JSON.parse(run.stdout())).toMatchObject({ is_error: false, result: 'done' });
    expect(conversationText(api.requests[0]!)).not.toContain('attend is available');
    expect(conversationText(api.requests[0]!)).not.toMatch(/hook (error|blocking)/i);
    expect(existsSync(h.root)).toBe(false);
  });
});
