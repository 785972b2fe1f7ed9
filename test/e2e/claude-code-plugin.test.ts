// The repo as a Claude Code plugin (--plugin-dir), in a real Claude Code: the SessionStart hook
// registers presence and tells the model about attend, the presence is gone after the session
// ends, the plugin's MCP server serves `send` with the session's identity, and without attend the
// plugin does nothing, quietly (issue #6 §1, §3, §5).

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { listLive } from '../../tools/bus/presence/roster.js';
import { procInfoFromProc } from '../../tools/identity/system.js';
import { parseSignal } from '../../tools/wire/envelope.js';
import { waitFor } from '../helpers/bus.js';
import { type ClaudeHome, claudeBinary, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type ApiRequest, type FakeAnthropic, conversationText, loadTools, startFakeAnthropic, toolNames, toolResultCount, toolResults } from '../helpers/fake-anthropic.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MCP_SEND = 'mcp__plugin_attend_attend__send';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
afterEach(async () => {
  await api?.close();
  home?.cleanup();
  home = api = undefined;
});

/** `claude <args>` to completion (plugin validate, mcp list): no model involved. */
function claudeSync(args: string[], env: Record<string, string>, cwd: string) {
  const r = spawnSync(claudeBinary(), args, { env, cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The attend servers `claude mcp list` shows, one line each. */
function attendServers(listing: string): string[] {
  return listing.split('\n').filter((l) => /attend/.test(l) && / - /.test(l));
}

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

  it("the plugin's MCP server (declared in its manifest) serves send, writing an envelope with the session's identity", async () => {
    const h = (home = makeClaudeHome());
    // ToolSearch until the plugin's server is up and send is loaded, then one send.
    api = await startFakeAnthropic((req) => loadTools(req, [MCP_SEND]) ?? (toolResults(req).some((r) => r.name === MCP_SEND) ? { text: 'done' } : { tool: MCP_SEND, input: { message: 'hello over mcp' } }));
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
    for (const p of ['.claude-plugin', 'bin', 'hooks', 'monitors', 'skills']) cpSync(join(REPO, p), join(plugin, p), { recursive: true });
    api = await startFakeAnthropic(() => ({ text: 'done' }));
    const run = runClaude(['-p', 'go', '--plugin-dir', plugin, '--output-format', 'json'], { env: h.env({ baseUrl: api.url, attendOnPath: false }), cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    expect(JSON.parse(run.stdout())).toMatchObject({ is_error: false, result: 'done' });
    expect(conversationText(api.requests[0]!)).not.toContain('attend is available');
    expect(conversationText(api.requests[0]!)).not.toMatch(/hook (error|blocking)/i);
    expect(existsSync(h.root)).toBe(false);
  });

  it('claude plugin validate --strict passes (author, engines, an inline MCP server)', () => {
    const h = (home = makeClaudeHome());
    const r = claudeSync(['plugin', 'validate', '--strict', REPO], h.env({ baseUrl: 'http://127.0.0.1:9', attendOnPath: false }), h.dir);
    expect(r.out).toContain('Validation passed');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/mcpServers: attend stdio/);
    expect(r.out).toMatch(/bin: attend/);
    const manifest = JSON.parse(readFileSync(join(REPO, '.claude-plugin', 'plugin.json'), 'utf8')) as { engines?: Record<string, string> };
    expect(manifest.engines?.['claude-code']).toMatch(/^>=2\.1\.\d+$/);
  });

  it('claude mcp list shows exactly one attend server, connected: with the plugin, in the checkout and elsewhere; none without it', () => {
    const h = (home = makeClaudeHome());
    const env = h.env({ baseUrl: 'http://127.0.0.1:9', attendOnPath: false });
    for (const cwd of [REPO, h.project]) {
      const r = claudeSync(['--plugin-dir', REPO, 'mcp', 'list'], env, cwd);
      expect(r.code, r.out).toBe(0);
      const servers = attendServers(r.out);
      expect(servers, `${cwd}\n${r.out}`).toHaveLength(1);
      expect(servers[0]).toMatch(/^plugin:attend:attend: .* - ✔ Connected$/);
      expect(r.out).not.toMatch(/Missing environment variables/);
    }
    // A user running plain `claude` in the checkout gets no project server from it.
    const plain = claudeSync(['mcp', 'list'], env, REPO);
    expect(plain.code, plain.out).toBe(0);
    expect(attendServers(plain.out), plain.out).toEqual([]);
    expect(plain.out).not.toMatch(/CLAUDE_PLUGIN_ROOT/);
  });

  it("a plugin-only session (no attend on PATH) runs `attend whoami` in Bash through the plugin's bin/", async () => {
    const h = (home = makeClaudeHome());
    api = await startFakeAnthropic((req) =>
      toolResultCount(req) === 0 ? { tool: 'Bash', input: { command: 'command -v attend; attend whoami', description: 'who am I' } } : { text: 'done' },
    );
    const env = h.env({ baseUrl: api.url, attendOnPath: false });
    // The control: without the plugin, the same PATH has no attend.
    expect(spawnSync('sh', ['-c', 'command -v attend'], { env }).status).not.toBe(0);
    const run = runClaude(['-p', 'go', '--plugin-dir', REPO, '--allowedTools', 'Bash', '--output-format', 'json'], { env, cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
    const seen = conversationText(api.requests.at(-1)!);
    expect(seen).toContain(join(REPO, 'bin', 'attend'));
    expect(seen).not.toMatch(/command not found/);
    expect(seen).toMatch(new RegExp(`id:\\s+${session_id}`));
    expect(seen).toMatch(/resolved: yes/);
  });

  it('a tool call the model can correct comes back to it as an error result with the reason, and the new verbs answer', async () => {
    const h = (home = makeClaudeHome());
    const tool = (name: string) => `mcp__plugin_attend_attend__${name}`;
    const loaded = [tool('send'), tool('status'), tool('create')];
    const steps: [string, Record<string, unknown>][] = [
      // Passes the JSON schema Claude Code sees, fails the verb's own check.
      [tool('send'), { message: '   ' }],
      [tool('send'), { message: 'x', channel: 'no|such channel' }],
      [tool('create'), { channel: 'ops', description: 'deploys' }],
      [tool('status'), {}],
    ];
    // ToolSearch until the plugin's server is up and the three are loaded, then the steps.
    const called = (req: ApiRequest) => toolResults(req).filter((r) => r.name !== 'ToolSearch');
    api = await startFakeAnthropic((req) => {
      const load = loadTools(req, loaded);
      if (load) return load;
      const step = steps[called(req).length];
      return step ? { tool: step[0], input: step[1] } : { text: 'done' };
    });
    const allowed = ['ToolSearch', tool('send'), tool('status'), tool('create')].join(',');
    const run = runClaude(['-p', 'go', '--plugin-dir', REPO, '--allowedTools', allowed, '--output-format', 'json'], { env: h.env({ baseUrl: api.url, attendOnPath: false }), cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
    const last = api.requests.at(-1)!;
    expect(toolNames(last)).toEqual(expect.arrayContaining(loaded));
    const results = called(last);
    expect(results.map((r) => r.name)).toEqual(steps.map((s) => s[0]));
    // Whatever Claude Code checks itself, the model sees an error it can act on.
    expect(results[0]).toMatchObject({ isError: true });
    expect(results[0]!.text).toMatch(/^attend: the message is empty/);
    expect(results[1]).toMatchObject({ isError: true });
    expect(results[1]!.text).toMatch(/^attend: invalid arguments for send: channel: a channel name is 1 to 64/);
    expect(results[2]).toMatchObject({ isError: false });
    if (process.env.SHOW) console.log(JSON.stringify(results, null, 1));
    // Claude Code hands the model structuredContent (compact JSON) when a result has it.
    expect(JSON.parse(results[2]!.text)).toEqual({ channel: 'ops', description: 'deploys', pinned: true });
    expect(results[3]).toMatchObject({ isError: false });
    expect(results[3]!.text).toContain(session_id);
    expect(existsSync(join(h.root, 'signals', '_broadcast'))).toBe(false);
  });
});
