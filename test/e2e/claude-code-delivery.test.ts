// Delivery into a real Claude Code (issue #6 §5): a message addressed to session B reaches
// B's model through B's Stop hook and a second turn does not repeat it; a Monitor running
// `attend run` in B surfaces a message sent from outside while the monitor lives.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listLive } from '../../tools/bus/presence/roster.js';
import { procInfoFromProc } from '../../tools/identity/system.js';
import { ME, runBin, waitFor } from '../helpers/bus.js';
import { type ClaudeHome, type ClaudeRun, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type FakeAnthropic, lastText, startFakeAnthropic, toolResultCount } from '../helpers/fake-anthropic.js';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
let run: ClaudeRun | undefined;
afterEach(async () => {
  run?.kill();
  await api?.close();
  home?.cleanup();
  home = api = run = undefined;
});

function liveSession(h: ClaudeHome, pid: number) {
  return listLive({ root: h.root, sessionsDir: join(h.claudeDir, 'sessions'), now: Date.now(), procInfo: procInfoFromProc }).find((p) => p.record?.pid === pid);
}

function outside(h: ClaudeHome, env: Record<string, string>, args: string[]) {
  // A human at a terminal: no Claude Code in its ancestry, no CLAUDE_* in its env.
  const r = runBin(args, { env: { PATH: env.PATH!, HOME: h.home, ATTEND_HOME: h.root }, cwd: h.dir });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe('claude code: delivery', () => {
  it("a message addressed to B reaches B's model through the Stop hook, once", async () => {
    const h = (home = makeClaudeHome());
    // The Stop hook's path: no deliverer (it would post the message during the turn; that
    // conduit is test/e2e/claude-code-deliverer.test.ts).
    const env = { ...h.env({ baseUrl: '' }), ATTEND_NO_DELIVERER: '1' };
    expect(runBin(['install'], { env, cwd: h.project }).exitCode).toBe(0);
    const go = join(h.dir, 'go');
    api = await startFakeAnthropic((req) => {
      const step = toolResultCount(req);
      if (step === 0) return { tool: 'Bash', input: { command: `while [ ! -f ${go} ]; do sleep 0.05; done; echo RELEASED`, description: 'wait' } };
      return { text: `turn after ${step} tool results` };
    });
    run = runClaude(['-p', 'go', '--allowedTools', 'Bash', '--output-format', 'json'], { env: { ...env, ANTHROPIC_BASE_URL: api.url }, cwd: h.project });
    const b = await waitFor(() => liveSession(h, run!.pid), { timeoutMs: 30_000, what: 'session B live' });
    const id = outside(h, env, ['send', '--to', b.id, 'stop-hook-payload-7f3a']);
    writeFileSync(go, '');
    const code = await run.exited(60_000);
    expect(code, run.stderr()).toBe(0);
    const carrying = api.requests.filter((r) => lastText(r).includes('stop-hook-payload-7f3a'));
    expect(carrying).toHaveLength(1);
    const seen = lastText(carrying[0]!);
    expect(seen).toMatch(/Stop hook/);
    expect(seen).toContain(`[attend message from_kind=human from=${ME} sig=ok to=${b.id}`);
    expect(seen).toContain(`id=${id}`);
    // The turn the Stop hook started ended, and the hook ran again without repeating it.
    const after = api.requests.slice(api.requests.indexOf(carrying[0]!) + 1);
    for (const r of after) expect(lastText(r)).not.toContain('stop-hook-payload-7f3a');
    expect(JSON.parse(run.stdout())).toMatchObject({ is_error: false });
  });

  it('a Monitor running attend run in B surfaces a message sent from outside while it lives', async () => {
    const h = (home = makeClaudeHome());
    const env = h.env({ baseUrl: '' });
    api = await startFakeAnthropic((req) => {
      const step = toolResultCount(req);
      if (step === 0) return { tool: 'ToolSearch', input: { query: 'select:Monitor' } };
      if (step === 1) return { tool: 'Monitor', input: { command: 'attend run', description: 'attend messages', timeout_ms: 120_000 } };
      return { text: 'listening' };
    });
    run = runClaude(['-p', 'go', '--allowedTools', 'ToolSearch,Monitor', '--output-format', 'json'], { env: { ...env, ANTHROPIC_BASE_URL: api.url }, cwd: h.project });
    const b = await waitFor(() => liveSession(h, run!.pid), { timeoutMs: 30_000, what: 'session B live' });
    // The sensor is up when its heartbeat is in the roster.
    await waitFor(() => liveSession(h, run!.pid)?.presence.some((p) => p.role === 'sensor'), { timeoutMs: 30_000, what: 'the sensor heartbeat' });
    const id = outside(h, env, ['send', '--to', b.id, 'monitor-payload-91c2']);
    const event = await waitFor(() => api!.requests.find((r) => lastText(r).includes('monitor-payload-91c2')), { timeoutMs: 30_000, what: 'the Monitor event at the model' });
    const seen = lastText(event);
    expect(seen).toContain('<task-notification>');
    expect(seen).toContain(`[attend message from_kind=human from=${ME} sig=ok to=${b.id}`);
    expect(seen).toContain(`id=${id}`);
    // The sensor said nothing while the bus was quiet (issue #11 §7): the first Monitor event
    // the model gets is this message, with the start line riding along in the same batch.
    const notifications = api.requests.filter((r) => lastText(r).includes('<task-notification>'));
    expect(notifications[0]).toBe(event);
    expect(seen).toMatch(/\[attend\] sensor started for /);
    expect(run.child.exitCode).toBeNull();
  });
});
