// `attend doctor`: each check, its failure, and the fix it names.

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { parseFastDoctor } from '../../tools/cli/fast-doctor.js';
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
    expect(checks['attend on PATH']).toMatchObject({ status: 'fail', fix: expect.stringMatching(/^npm install -g \/\S+, or from a tarball: npm pack in \/\S+, then npm install -g \.\/attend-0\.1\.0\.tgz; or use the plugin/) });
    expect(checks['attend on PATH']!.fix).not.toMatch(/npm install -g attend\b/);
    expect(checks.hooks).toMatchObject({ status: 'fail', fix: expect.stringMatching(/attend install/) });
    expect(checks['MCP server']).toMatchObject({ status: 'warn' });
    expect(checks.session).toMatchObject({ status: 'ok', detail: expect.stringContaining(session.sessionId) });
    expect(checks.conduit).toMatchObject({ status: 'warn', fix: expect.stringMatching(/attend run/) });
  });

  it('after install, in a session with a live sensor: every check passes', () => {
    const env = { ...session.env, PATH: pathWithAttend, SHELL: '/bin/bash' };
    // The login shell's PATH is the profile's, as on a machine where attend's directory is in it.
    writeFileSync(join(bus.home, '.profile'), `export PATH="${pathWithAttend}"\n`);
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

  it('a hook or MCP entry that points at a missing binary fails, naming which and what is missing', () => {
    const env = { ...session.env, PATH: pathWithAttend };
    expect(runBin(['install'], { env, cwd: session.cwd }).exitCode).toBe(0);
    const settingsPath = join(bus.claudeDir, 'settings.json');
    const settings = readFileSync(settingsPath, 'utf8');
    const gone = join(bus.dir, 'gone', 'node');
    writeFileSync(settingsPath, settings.replace(`"${process.execPath} `, `"${gone} `));
    const { exitCode, checks } = doctor(env);
    expect(exitCode).toBe(5);
    expect(checks.hooks).toMatchObject({ status: 'fail', detail: expect.stringContaining(`SessionStart in ${settingsPath}: ${gone} is missing`), fix: expect.stringMatching(/^attend install/) });
    expect(checks.hooks!.detail).not.toContain('Stop in');
    // The MCP entry: a CLI that is no longer there (a moved checkout).
    const mcpPath = join(bus.claudeDir, '.claude.json');
    const mcp = JSON.parse(readFileSync(mcpPath, 'utf8'));
    mcp.mcpServers.attend.args[0] = join(bus.dir, 'moved', 'attend.cjs');
    writeFileSync(mcpPath, JSON.stringify(mcp));
    expect(doctor(env).checks['MCP server']).toMatchObject({ status: 'fail', detail: expect.stringContaining(`${mcpPath}: ${join(bus.dir, 'moved', 'attend.cjs')} is missing`) });
    // attend install puts them right.
    expect(runBin(['install'], { env, cwd: session.cwd }).exitCode).toBe(0);
    const after = doctor(env).checks;
    expect(after.hooks?.status).toBe('ok');
    expect(after['MCP server']?.status).toBe('ok');
  });

  it('hooks of an older install, attend by name, would not run without attend on PATH, and say so', () => {
    mkdirSync(bus.claudeDir, { recursive: true });
    const old = (verb: string) => ({ hooks: [{ type: 'command', command: `command -v attend >/dev/null 2>&1 && attend hook ${verb} || true` }] });
    writeFileSync(join(bus.claudeDir, 'settings.json'), JSON.stringify({ hooks: { SessionStart: [old('session-start')], Stop: [old('stop')] } }));
    expect(doctor({ ...session.env, PATH: '/usr/bin:/bin' }).checks.hooks).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^would not run: SessionStart in \S+: attend is not on PATH/) });
    expect(doctor({ ...session.env, PATH: pathWithAttend }).checks.hooks).toMatchObject({ status: 'warn', fix: expect.stringMatching(/writes absolute paths/) });
  });

  it('attend not on the login shell PATH: says the line to add to the profile, which then works', () => {
    const env = { ...session.env, PATH: pathWithAttend, SHELL: '/bin/bash' };
    // A login shell builds PATH from the profile, not from the parent's environment.
    writeFileSync(join(bus.home, '.profile'), 'export PATH=/usr/local/bin:/usr/bin:/bin\n');
    const before = doctor(env).checks['attend on login PATH']!;
    const binDir = join(bus.dir, 'bin');
    expect(before).toMatchObject({ status: 'warn', detail: expect.stringContaining('attend not on the PATH of a login shell (/bin/bash -lc)') });
    expect(before.fix).toBe(`echo 'export PATH="${binDir}${dirname(process.execPath) === '/usr/bin' ? '' : `:${dirname(process.execPath)}`}:$PATH"' >> ~/.profile, then open a new login shell`);
    // Do what it says, in the user's shell, and ask again.
    const fix = before.fix!.replace(/, then open a new login shell$/, '');
    expect(spawnSync('/bin/bash', ['-c', fix], { env }).status).toBe(0);
    expect(doctor(env).checks['attend on login PATH']).toMatchObject({ status: 'ok', detail: `${join(binDir, 'attend')} (/bin/bash -lc)` });
  });

  it('the fast path and the full CLI print the same report, text and JSON, for the same machine state', () => {
    // `attend doctor [--json]` is the bundled fast path; with `--no-color` first (which doctor
    // draws nothing with) the fast path declines and commander runs the same command.
    expect(parseFastDoctor(['doctor'])).not.toBeNull();
    expect(parseFastDoctor(['--no-color', 'doctor'])).toBeNull();
    const env = { ...session.env, PATH: pathWithAttend, SHELL: '/bin/bash' };
    // A session's first attend run, doctor's included, records its lineage (and so creates the
    // bus root): one run before, so both paths see the same machine.
    expect(runBin(['whoami'], { env, cwd: session.cwd }).exitCode).toBe(0);
    const both = (json: boolean) => {
      const args = json ? ['doctor', '--json'] : ['doctor'];
      const fast = runBin(args, { env, cwd: session.cwd });
      const full = runBin(['--no-color', ...args], { env, cwd: session.cwd });
      expect(fast.stdout).not.toBe('');
      expect({ exitCode: full.exitCode, stdout: full.stdout, stderr: full.stderr }, args.join(' ')).toEqual({ exitCode: fast.exitCode, stdout: fast.stdout, stderr: fast.stderr });
      return fast;
    };
    // Before install: checks fail (exit 5), with their fixes.
    expect(both(false).exitCode).toBe(5);
    expect(both(true).stdout).toMatch(/"status": "fail"/);
    // After install, in a session with a live sensor: every check passes.
    writeFileSync(join(bus.home, '.profile'), `export PATH="${pathWithAttend}"\n`);
    expect(runBin(['install'], { env, cwd: session.cwd }).exitCode).toBe(0);
    runBin(['send', 'make the bus root exist'], { env, cwd: session.cwd });
    writePresence(bus.root, { id: session.sessionId, kind: 'agent', origin: session.cwd, heartbeat: Date.now(), pid: process.pid, role: 'sensor' });
    expect(both(false)).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^ok {4}/) });
    expect(both(true).exitCode).toBe(0);
  });
});
