// `attend doctor`: each check, its failure, and the fix it names.

import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { BIN, type FakeSession, type TempBus, fakeSession, makeTempBus, runBin } from '../helpers/bus.js';

interface Check {
  name: string;
  status: string;
  detail: string;
  fix: string | null;
}

let bus: TempBus;
let session: FakeSession;
let pathWithAttend: string;
beforeEach(() => {
  bus = makeTempBus();
  session = fakeSession(bus);
  const binDir = join(bus.dir, 'bin');
  mkdirSync(binDir);
  symlinkSync(BIN, join(binDir, 'attend'));
  pathWithAttend = `${binDir}:${process.env.PATH}`;
});
afterEach(() => {
  session.kill();
  bus.cleanup();
});

function doctor(env: Record<string, string>): { exitCode: number; checks: Record<string, Check> } {
  const r = runBin(['doctor', '--json'], { env, cwd: session.cwd });
  const parsed = JSON.parse(r.stdout) as { checks: Check[] };
  return { exitCode: r.exitCode, checks: Object.fromEntries(parsed.checks.map((c) => [c.name, c])) };
}

describe('attend doctor', () => {
  it('before install: names each missing piece with its fix and exits 5', () => {
    const { exitCode, checks } = doctor({ ...session.env, PATH: '/usr/bin:/bin' });
    expect(exitCode).toBe(5);
    // attend is not on the npm registry: the fix names this checkout and the tarball route (issue #10).
    expect(checks['attend on PATH']).toMatchObject({ status: 'fail', fix: expect.stringMatching(/^npm install -g \/\S+, or from a tarball: npm pack in the checkout, then npm install -g \.\/attend-<version>\.tgz; or use the plugin/) });
    expect(checks['attend on PATH']!.fix).not.toMatch(/npm install -g attend\b/);
    expect(checks.hooks).toMatchObject({ status: 'fail', fix: expect.stringMatching(/attend install/) });
    expect(checks['MCP server']).toMatchObject({ status: 'warn' });
    expect(checks.session).toMatchObject({ status: 'ok', detail: expect.stringContaining(session.sessionId) });
    expect(checks.conduit).toMatchObject({ status: 'warn', fix: expect.stringMatching(/attend run/) });
  });

  it('after install, in a session with a live sensor: every check passes', () => {
    const env = { ...session.env, PATH: pathWithAttend };
    expect(runBin(['install'], { env, cwd: session.cwd }).exitCode).toBe(0);
    runBin(['send', 'make the bus root exist'], { env, cwd: session.cwd });
    writePresence(bus.root, { id: session.sessionId, kind: 'agent', origin: session.cwd, heartbeat: Date.now(), pid: process.pid, role: 'sensor' });
    const { exitCode, checks } = doctor(env);
    expect(Object.values(checks).filter((c) => c.status !== 'ok')).toEqual([]);
    expect(exitCode).toBe(0);
  });

  it('names the deliverer as the live conduit, and what would hold its posts (issue 21 §2)', () => {
    const env = { ...session.env, PATH: pathWithAttend };
    writePresence(bus.root, { id: session.sessionId, kind: 'agent', origin: session.cwd, heartbeat: Date.now(), pid: process.pid, role: 'deliverer' });
    expect(doctor(env).checks.conduit).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^the deliverer: attend deliver is live/) });
    mkdirSync(join(session.cwd, '.claude'), { recursive: true });
    writeFileSync(join(session.cwd, '.claude', 'settings.json'), JSON.stringify({ crossSessionInbound: 'hold' }));
    expect(doctor(env).checks.conduit).toMatchObject({ status: 'warn', detail: expect.stringContaining('crossSessionInbound "hold"') });
  });

  it('the attend plugin, installed through Claude Code, counts for hooks, MCP and skill', () => {
    mkdirSync(join(bus.claudeDir, 'plugins'), { recursive: true });
    writeFileSync(join(bus.claudeDir, 'plugins', 'installed_plugins.json'), JSON.stringify({ version: 2, plugins: { 'attend@local': [{ installPath: '/x' }] } }));
    const { checks } = doctor({ ...session.env, PATH: pathWithAttend });
    expect(checks.hooks).toMatchObject({ status: 'ok', detail: 'from the attend plugin' });
    expect(checks['MCP server']?.status).toBe('ok');
    expect(checks.skill?.status).toBe('ok');
  });

  it('a group-writable bus root fails with the chmod that fixes it', () => {
    mkdirSync(bus.root, { recursive: true });
    chmodSync(bus.root, 0o777);
    const { exitCode, checks } = doctor({ ...session.env, PATH: pathWithAttend });
    expect(exitCode).toBe(5);
    expect(checks['bus root']).toMatchObject({ status: 'fail', fix: `run: chmod 700 ${bus.root}` });
  });

  it('a relative ATTEND_HOME fails the bus root check (issue #10)', () => {
    const { exitCode, checks } = doctor({ ...session.env, PATH: pathWithAttend, ATTEND_HOME: 'rel/bus' });
    expect(exitCode).toBe(5);
    expect(checks['bus root']).toMatchObject({ status: 'fail', detail: "ATTEND_HOME must be an absolute path, not 'rel/bus'" });
  });

  it('outside a session it says so, as a warning', () => {
    const { checks } = doctor({ ...bus.env, PATH: pathWithAttend });
    expect(checks.session).toMatchObject({ status: 'warn', detail: expect.stringMatching(/not inside a Claude Code session/) });
    expect(checks.conduit).toBeUndefined();
  });
});
