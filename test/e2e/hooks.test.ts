// The hook entry points: whatever the payload, a hook exits 0 and never blocks the session;
// what is wrong becomes a warning on stderr (issue #6, Bad input).

import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { BIN, type FakeSession, type TempBus, runBin, useTempBus } from '../helpers/bus.js';

const RUN_ATTEND = fileURLToPath(new URL('../../hooks/run-attend.sh', import.meta.url));

let bus: TempBus;
let session: FakeSession;
const newSession = useTempBus((b) => (bus = b));
beforeEach(() => {
  session = newSession({ name: 'hooked' });
});

function payload(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ session_id: session.sessionId, cwd: session.cwd, hook_event_name: 'SessionStart', source: 'startup', ...extra });
}

describe('attend hook session-start', () => {
  it('records presence with role session and the Claude pid, and returns additionalContext', () => {
    const r = runBin(['hook', 'session-start'], { env: session.env, cwd: session.cwd, input: payload() });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(out.hookSpecificOutput.additionalContext).toContain('attend run');
    expect(out.hookSpecificOutput.additionalContext).toContain('"hooked"');
    expect(readPresence(bus.root)).toEqual([expect.objectContaining({ id: session.sessionId, kind: 'agent', role: 'session', pid: session.pid, origin: session.cwd })]);
  });

  it('after /clear (same pid, new session id) the old presence is replaced, not duplicated', () => {
    expect(runBin(['hook', 'session-start'], { env: session.env, input: payload() }).exitCode).toBe(0);
    const cleared = '11111111-2222-4333-8444-555555555555';
    const recordPath = join(bus.claudeDir, 'sessions', `${session.pid}.json`);
    const record = JSON.parse(readFileSync(recordPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(recordPath, JSON.stringify({ ...record, sessionId: cleared }));
    const r = runBin(['hook', 'session-start'], { env: { ...session.env, CLAUDE_CODE_SESSION_ID: cleared }, input: payload({ session_id: cleared, source: 'clear' }) });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readPresence(bus.root).map((p) => p.id)).toEqual([cleared]);
  });

  it.each([
    ['not JSON', 'this is {not json', /not JSON/],
    ['empty', '', /empty/],
    ['a JSON array', '[1,2,3]', /not a JSON object/],
    ['missing session_id', JSON.stringify({ hook_event_name: 'SessionStart' }), /no session_id/],
  ])('a payload that is %s still exits 0, with a warning on stderr', (_what, input, warning) => {
    const r = runBin(['hook', 'session-start'], { env: session.env, cwd: session.cwd, input });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(warning);
    // The session is known from its own record, so the context is still given.
    expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain('attend');
  });

  it('outside any session: exits 0 with a warning and prints nothing', () => {
    const r = runBin(['hook', 'session-start'], { env: bus.env, input: payload() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/no Claude Code session owns this hook/);
    // Positive control: inside the session the same hook gives its context.
    expect(JSON.parse(runBin(['hook', 'session-start'], { env: session.env, input: payload() }).stdout).hookSpecificOutput.hookEventName).toBe('SessionStart');
  });

  it('session-end removes the presence; an unknown event is ignored with exit 0', () => {
    expect(runBin(['hook', 'session-start'], { env: session.env, input: payload() }).exitCode).toBe(0);
    // The Stop hook's drain stamps a 'drain' heartbeat too; the end takes both.
    expect(runBin(['hook', 'stop'], { env: session.env, input: payload({ hook_event_name: 'Stop' }) }).exitCode).toBe(0);
    expect(readPresence(bus.root).map((p) => p.role).sort()).toEqual(['drain', 'session']);
    const end = runBin(['hook', 'session-end'], { env: session.env, input: payload({ hook_event_name: 'SessionEnd' }) });
    expect(end.exitCode).toBe(0);
    expect(readPresence(bus.root)).toEqual([]);
    const odd = runBin(['hook', 'post-tool-use'], { env: session.env, input: payload() });
    expect(odd.exitCode).toBe(0);
    expect(odd.stderr).toMatch(/unknown hook event 'post-tool-use'/);
  });

  it('stop delivers a message addressed to the session once, as hook JSON', () => {
    const sent = runBin(['send', '--to', session.sessionId, 'for the hooked session'], { env: bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const stopPayload = payload({ hook_event_name: 'Stop', stop_hook_active: false });
    const first = runBin(['hook', 'stop'], { env: session.env, cwd: session.cwd, input: stopPayload });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain('for the hooked session');
    expect(() => JSON.parse(first.stdout)).not.toThrow();
    const second = runBin(['hook', 'stop'], { env: session.env, cwd: session.cwd, input: payload({ hook_event_name: 'Stop', stop_hook_active: true }) });
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe('');
  });

  it('stop never fails the session, whatever the drain does', () => {
    for (const input of [payload({ hook_event_name: 'Stop', stop_hook_active: false }), 'garbage']) {
      const r = runBin(['hook', 'stop'], { env: session.env, input });
      expect(r.exitCode, r.stderr).toBe(0);
    }
  });
});

describe('hooks/run-attend.sh', () => {
  function runScript(verb: string, path: string, input = payload()) {
    // A plugin root without a build, so only PATH can supply attend.
    const pluginRoot = join(bus.dir, 'plugin');
    mkdirSync(pluginRoot, { recursive: true });
    const r = spawnSync('/bin/sh', [RUN_ATTEND, verb], { env: { ...session.env, PATH: path, CLAUDE_PLUGIN_ROOT: pluginRoot }, input, encoding: 'utf8' });
    return { exitCode: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  it('does nothing, quietly, when attend is missing', () => {
    for (const verb of ['session-start', 'stop', 'session-end', 'run', 'mcp']) {
      expect(runScript(verb, '/usr/bin:/bin')).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    }
    // Positive control: with attend on PATH the same script does speak.
    const binDir = join(bus.dir, 'bin-control');
    mkdirSync(binDir);
    symlinkSync(BIN, join(binDir, 'attend'));
    expect(runScript('session-start', `${binDir}:${process.env.PATH}`).stdout).toContain('SessionStart');
  });

  it('uses a global attend when the plugin has no build', () => {
    const binDir = join(bus.dir, 'bin');
    mkdirSync(binDir);
    symlinkSync(BIN, join(binDir, 'attend'));
    const r = runScript('session-start', `${binDir}:${process.env.PATH}`);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.hookEventName).toBe('SessionStart');
  });

  it('turns a failing attend (e.g. exit 2, which a Stop hook reads as block) into exit 0', () => {
    const binDir = join(bus.dir, 'oldbin');
    mkdirSync(binDir);
    writeFileSync(join(binDir, 'attend'), '#!/bin/sh\necho "error: unknown command hook" >&2\nexit 2\n');
    chmodSync(join(binDir, 'attend'), 0o755);
    const r = runScript('stop', `${binDir}:/usr/bin:/bin`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
  });
});
