// `attend install` (no plugin) with attend on PATH, then a real Claude Code: the installed
// SessionStart hook runs from ~/.claude/settings.json, the installed MCP server is offered, and
// `attend doctor` from the Bash tool finds the session (issue #6 §2, §5).

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSignal } from '../../tools/wire/envelope.js';
import { runBin } from '../helpers/bus.js';
import { type ClaudeHome, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type FakeAnthropic, conversationText, lastText, loadTools, startFakeAnthropic, toolNames, toolResults } from '../helpers/fake-anthropic.js';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
afterEach(async () => {
  await api?.close();
  home?.cleanup();
  home = api = undefined;
});

describe('claude code after attend install', () => {
  it('runs the installed hooks and doctor resolves the session from inside it', async () => {
    const h = (home = makeClaudeHome());
    // The installed MCP server is offered: ToolSearch loads its send (searching again while the
    // server is still connecting); then doctor from the Bash tool.
    api = await startFakeAnthropic(
      (req) =>
        loadTools(req, ['mcp__attend__send']) ??
        (toolResults(req).some((r) => r.name === 'Bash') ? { text: 'done' } : { tool: 'Bash', input: { command: 'attend doctor --json', description: 'doctor' } }),
    );
    const env = h.env({ baseUrl: api.url });
    const install = runBin(['install'], { env, cwd: h.project });
    expect(install.exitCode, install.stderr).toBe(0);
    const run = runClaude(['-p', 'go', '--allowedTools', 'Bash', '--output-format', 'json'], { env, cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
    const first = api.requests[0]!;
    expect(conversationText(first)).toContain(`attend is available`);
    expect(toolNames(api.requests.at(-1)!)).toContain('mcp__attend__send');
    const doctorOut = lastText(api.requests.at(-1)!);
    const checks = Object.fromEntries((JSON.parse(doctorOut.slice(doctorOut.indexOf('{'))) as { checks: { name: string; status: string; detail: string }[] }).checks.map((c) => [c.name, c]));
    expect(checks.session).toMatchObject({ status: 'ok', detail: expect.stringContaining(session_id) });
    expect(checks.hooks?.status).toBe('ok');
    expect(checks['attend on PATH']?.status).toBe('ok');
    expect(checks['MCP server']?.status).toBe('ok');
  });

  it('with attend nowhere on PATH, the installed hooks and MCP server still run: they name node and attend by absolute path', async () => {
    const h = (home = makeClaudeHome());
    api = await startFakeAnthropic((req) => loadTools(req, ['mcp__attend__whoami']) ?? (toolResults(req).some((r) => r.name === 'mcp__attend__whoami') ? { text: 'done' } : { tool: 'mcp__attend__whoami', input: {} }));
    const env = h.env({ baseUrl: api.url, attendOnPath: false });
    expect(spawnSync('/bin/sh', ['-c', 'command -v attend'], { env }).status, 'attend must not be on this PATH').not.toBe(0);
    const install = runBin(['install'], { env, cwd: h.project });
    expect(install.exitCode, install.stderr).toBe(0);
    const run = runClaude(['-p', 'go', '--allowedTools', 'ToolSearch,mcp__attend__whoami', '--output-format', 'json'], { env, cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
    // The SessionStart hook ran (its context), and the MCP server answered as this session.
    expect(conversationText(api.requests[0]!)).toContain('attend is available');
    expect(lastText(api.requests.at(-1)!)).toContain(session_id);
  });

  it('--scope project: the project .mcp.json serves send with the session identity, and the project hooks run', async () => {
    const h = (home = makeClaudeHome());
    const MCP_SEND = 'mcp__attend__send';
    // ToolSearch until the project's server is up and send is loaded, then one send.
    api = await startFakeAnthropic((req) => loadTools(req, [MCP_SEND]) ?? (toolResults(req).some((r) => r.name === MCP_SEND) ? { text: 'done' } : { tool: MCP_SEND, input: { message: 'from the project mcp server' } }));
    const env = h.env({ baseUrl: api.url });
    const install = runBin(['install', '--scope', 'project'], { env, cwd: h.project });
    expect(install.exitCode, install.stderr).toBe(0);
    // Project MCP servers wait for the user's approval; this stands in for it.
    h.writeSettings({ enableAllProjectMcpServers: true });
    const run = runClaude(['-p', 'go', '--allowedTools', `ToolSearch,${MCP_SEND}`, '--output-format', 'json'], { env, cwd: h.project });
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const { session_id } = JSON.parse(run.stdout()) as { session_id: string };
    expect(conversationText(api.requests[0]!)).toContain('attend is available');
    const dir = join(h.root, 'signals', '_broadcast');
    const files = readdirSync(dir).filter((f) => f.endsWith('.signal'));
    expect(files).toHaveLength(1);
    expect(parseSignal(readFileSync(join(dir, files[0]!), 'utf8').trimEnd())).toMatchObject({ fromKind: 'agent', fromId: session_id, body: 'from the project mcp server' });
  });
});
