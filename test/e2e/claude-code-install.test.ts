// `attend install` (no plugin) with attend on PATH, then a real Claude Code: the installed
// SessionStart hook runs from ~/.claude/settings.json, the installed MCP server is offered, and
// `attend doctor` from the Bash tool finds the session (issue #6 §2, §5).

import { afterEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bus.js';
import { type ClaudeHome, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type FakeAnthropic, conversationText, lastText, startFakeAnthropic, toolResultCount } from '../helpers/fake-anthropic.js';

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
    api = await startFakeAnthropic((req) =>
      toolResultCount(req) === 0 ? { tool: 'Bash', input: { command: 'attend doctor --json', description: 'doctor' } } : { text: 'done' },
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
    expect(conversationText(first)).toContain('mcp__attend__send');
    const doctorOut = lastText(api.requests.at(-1)!);
    const checks = Object.fromEntries((JSON.parse(doctorOut.slice(doctorOut.indexOf('{'))) as { checks: { name: string; status: string; detail: string }[] }).checks.map((c) => [c.name, c]));
    expect(checks.session).toMatchObject({ status: 'ok', detail: expect.stringContaining(session_id) });
    expect(checks.hooks?.status).toBe('ok');
    expect(checks['attend on PATH']?.status).toBe('ok');
    expect(checks['MCP server']?.status).toBe('ok');
  });
});
