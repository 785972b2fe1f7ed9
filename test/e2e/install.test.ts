// `attend install` / `attend uninstall` against real files in a temporary HOME: merged,
// idempotent, backed up, never clobbering foreign hooks, refusing malformed files untouched.

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { BIN, type TempBus, fakeSession, makeTempBus, runBin } from '../helpers/bus.js';

// What attend install writes the hooks and the MCP entry to run: the build's CLI by absolute path.
const CLI = join(dirname(BIN), 'attend.cjs');

let bus: TempBus;
let env: Record<string, string>;
let claudeDir: string;
let settingsPath: string;

beforeEach(() => {
  bus = makeTempBus();
  // Claude Code's default layout: ~/.claude and ~/.claude.json.
  env = { ...bus.env };
  delete env.CLAUDE_CONFIG_DIR;
  claudeDir = join(bus.home, '.claude');
  settingsPath = join(claudeDir, 'settings.json');
});
afterEach(() => bus.cleanup());

const foreignSettings = {
  model: 'opus',
  permissions: { allow: ['Bash(git status)'] },
  hooks: {
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/local/bin/guard' }] }],
  },
};

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[p] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('attend install', () => {
  it('merges hooks beside foreign ones, backs up first, installs the skill and the MCP server', () => {
    mkdirSync(claudeDir, { recursive: true });
    writeFileSync(settingsPath, JSON.stringify(foreignSettings, null, 2));
    writeFileSync(join(bus.home, '.claude.json'), JSON.stringify({ numStartups: 3, mcpServers: { other: { command: 'x' } } }));
    const r = runBin(['install', '--json'], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { changes: { path: string; action: string; backup: string | null }[] };
    expect(result.changes.map((c) => c.action)).toEqual(['update', 'create', 'update']);

    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(settings.model).toBe('opus');
    expect(settings.permissions.allow).toEqual(foreignSettings.permissions.allow);
    // attend's sandbox rules (docs/trust.md, "Inside Claude Code's sandbox"): the key directory
    // out of the Read and Edit tools and of sandboxed commands, the records beside it out of
    // the Edit tool, the bus's message directories writable, one address for the signer.
    expect(settings.permissions.deny).toEqual(['Read(~/.config/attend/keys/**)', 'Edit(~/.config/attend/keys/**)', 'Edit(~/.config/attend/trust/**)']);
    expect(settings.sandbox.filesystem.denyRead).toEqual([join(bus.home, '.config', 'attend', 'keys')]);
    expect(settings.sandbox.filesystem.allowWrite).toEqual(['signals', 'state', 'cache', 'quarantine'].map((d) => join(bus.root, d)));
    expect(settings.env.ATTEND_SIGNER).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(settings.sandbox.network.allowedDomains).toEqual([settings.env.ATTEND_SIGNER]);
    expect(settings.sandbox).not.toHaveProperty('enabled');
    // Every path the rules name exists, so the sandbox leaves no placeholder at its name.
    for (const d of [...settings.sandbox.filesystem.denyRead, ...settings.sandbox.filesystem.allowWrite]) expect(statSync(d).isDirectory(), d).toBe(true);
    // The claim check (issue 23 §2) beside the foreign PreToolUse hook, for the edit tools and Bash.
    expect(settings.hooks.PreToolUse.slice(0, -1)).toEqual(foreignSettings.hooks.PreToolUse);
    expect(settings.hooks.PreToolUse.at(-1)).toMatchObject({ matcher: 'Edit|Write|MultiEdit|NotebookEdit|Bash', hooks: [{ type: 'command', command: expect.stringMatching(/attend\.cjs hook pre-tool-use$/), timeout: 5 }] });
    expect(settings.hooks.Stop[0]).toEqual(foreignSettings.hooks.Stop[0]);
    expect(settings.hooks.Stop[1].hooks[0].command).toMatch(/attend\.cjs hook stop$/);
    expect(settings.hooks.SessionStart[0].hooks[0].command).toMatch(/attend\.cjs hook session-start$/);
    expect(settings.hooks.SessionEnd[0].hooks[0].command).toMatch(/attend\.cjs hook session-end$/);

    const backup = result.changes[0]!.backup!;
    expect(JSON.parse(readFileSync(backup, 'utf8'))).toEqual(foreignSettings);
    expect(readFileSync(join(claudeDir, 'skills', 'attend', 'SKILL.md'), 'utf8')).toMatch(/^---\nname: attend\n/);
    const claudeJson = JSON.parse(readFileSync(join(bus.home, '.claude.json'), 'utf8'));
    expect(claudeJson.numStartups).toBe(3);
    expect(claudeJson.mcpServers.other).toEqual({ command: 'x' });
    expect(claudeJson.mcpServers.attend).toEqual({ type: 'stdio', command: process.execPath, args: [CLI, 'mcp'], env: {} });
  });

  it('writes hooks and the MCP entry with absolute paths to node and the built CLI, so they run without PATH', () => {
    const r = runBin(['install'], { env: { ...env, PATH: '/nonexistent' } });
    expect(r.exitCode, r.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    for (const [event, verb] of [['SessionStart', 'session-start'], ['Stop', 'stop'], ['SessionEnd', 'session-end']] as const) {
      expect(settings.hooks[event][0].hooks[0].command).toBe(`${process.execPath} ${CLI} hook ${verb}`);
    }
    const mcp = JSON.parse(readFileSync(join(bus.home, '.claude.json'), 'utf8')).mcpServers.attend;
    expect(mcp).toMatchObject({ command: process.execPath, args: [CLI, 'mcp'] });
    // The SessionStart hook, run as Claude Code runs it (sh -c) with no PATH at all, works.
    const s = fakeSession(bus);
    try {
      const payload = JSON.stringify({ session_id: s.sessionId, hook_event_name: 'SessionStart', cwd: s.cwd });
      const hook = spawnSync('/bin/sh', ['-c', settings.hooks.SessionStart[0].hooks[0].command], { env: { ...s.env, PATH: '/nonexistent', ATTEND_NO_DELIVERER: '1' }, cwd: s.cwd, input: payload, encoding: 'utf8' });
      expect(hook.status, hook.stderr).toBe(0);
      expect(hook.stdout).toContain('attend is available');
    } finally {
      s.kill();
    }
  });

  it('brings hooks and an MCP entry of an older install (attend by name) to absolute paths, keeping the entry env', () => {
    mkdirSync(claudeDir, { recursive: true });
    const old = (verb: string) => ({ hooks: [{ type: 'command', command: `command -v attend >/dev/null 2>&1 && attend hook ${verb} || true`, timeout: 10 }] });
    writeFileSync(settingsPath, JSON.stringify({ hooks: { SessionStart: [old('session-start')], Stop: [old('stop')], SessionEnd: [old('session-end')] } }));
    writeFileSync(join(bus.home, '.claude.json'), JSON.stringify({ mcpServers: { attend: { type: 'stdio', command: 'attend', args: ['mcp'], env: { ATTEND_HOME: bus.root } } } }));
    expect(runBin(['install'], { env }).exitCode).toBe(0);
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
    expect(settings.hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: `${process.execPath} ${CLI} hook stop`, timeout: 10 }] }]);
    expect(JSON.parse(readFileSync(join(bus.home, '.claude.json'), 'utf8')).mcpServers.attend).toEqual({ type: 'stdio', command: process.execPath, args: [CLI, 'mcp'], env: { ATTEND_HOME: bus.root } });
    expect(runBin(['install'], { env }).stdout).toContain('Nothing to change.');
    // And uninstall recognises the new entries as attend's.
    expect(runBin(['uninstall'], { env }).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(settingsPath, 'utf8'))).toEqual({});
  });

  it('re-running changes nothing and writes no new backup', () => {
    expect(runBin(['install'], { env }).exitCode).toBe(0);
    const before = snapshot(bus.home);
    const mtime = statSync(settingsPath).mtimeMs;
    const again = runBin(['install'], { env });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('Nothing to change.');
    expect(snapshot(bus.home)).toEqual(before);
    expect(statSync(settingsPath).mtimeMs).toBe(mtime);
  });

  it('--dry-run reports the plan and writes nothing', () => {
    const r = runBin(['install', '--dry-run'], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/would create\s+hooks/);
    expect(r.stdout).toContain('Dry run: nothing was written.');
    expect(existsSync(claudeDir)).toBe(false);
    expect(existsSync(join(bus.home, '.claude.json'))).toBe(false);
  });

  it('a malformed settings.json stops the install with the parse error and the path; nothing is written', () => {
    mkdirSync(claudeDir, { recursive: true });
    writeFileSync(settingsPath, '{"hooks": {"Stop": [ }');
    const before = snapshot(bus.home);
    const r = runBin(['install'], { env });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain(settingsPath);
    expect(r.stderr).toMatch(/not valid JSON: .*(Unexpected|Expected)/);
    expect(r.stdout).toBe('');
    expect(snapshot(bus.home)).toEqual(before);
  });

  it('a foreign shape (hooks not an object, an event not an array) is refused untouched', () => {
    mkdirSync(claudeDir, { recursive: true });
    for (const text of ['[1,2]', '{"hooks": "none"}', '{"hooks": {"Stop": {"command": "x"}}}']) {
      writeFileSync(settingsPath, text);
      const r = runBin(['install'], { env });
      expect(r.exitCode, text).toBe(4);
      expect(r.stderr).toContain(settingsPath);
      expect(readFileSync(settingsPath, 'utf8')).toBe(text);
      expect(existsSync(join(claudeDir, 'skills'))).toBe(false);
    }
  });

  it('--scope project writes ./.claude/settings.json, the skill and ./.mcp.json; a bad scope is a usage error', () => {
    const project = join(bus.dir, 'proj');
    mkdirSync(project);
    const r = runBin(['install', '--scope', 'project'], { env, cwd: project });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')).hooks.Stop).toHaveLength(1);
    expect(existsSync(join(project, '.claude', 'skills', 'attend', 'SKILL.md'))).toBe(true);
    expect(JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: { attend: { command: process.execPath, args: [CLI, 'mcp'] } } });
    const bad = runBin(['install', '--scope', 'global'], { env, cwd: project });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--scope takes user or project/);
  });

  it('refuses an existing, different MCP server named attend', () => {
    writeFileSync(join(bus.home, '.claude.json'), JSON.stringify({ mcpServers: { attend: { command: 'something-else' } } }));
    const r = runBin(['install'], { env });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toMatch(/already has an MCP server named "attend"/);
    expect(existsSync(settingsPath)).toBe(false);
  });
});

describe('attend uninstall', () => {
  it('removes only what install added and keeps foreign hooks', () => {
    mkdirSync(claudeDir, { recursive: true });
    writeFileSync(settingsPath, JSON.stringify(foreignSettings, null, 2));
    expect(runBin(['install'], { env }).exitCode).toBe(0);
    const r = runBin(['uninstall'], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(settingsPath, 'utf8'))).toEqual(foreignSettings);
    expect(existsSync(join(claudeDir, 'skills', 'attend'))).toBe(false);
    // Nothing empty left behind (issue #10): no skills folder, no "mcpServers": {}.
    expect(existsSync(join(claudeDir, 'skills'))).toBe(false);
    expect(JSON.parse(readFileSync(join(bus.home, '.claude.json'), 'utf8'))).not.toHaveProperty('mcpServers');
    const again = runBin(['uninstall'], { env });
    expect(again.stdout).toContain('Nothing to change.');
  });

  it('keeps a skills folder and MCP servers that hold something else', () => {
    mkdirSync(join(claudeDir, 'skills', 'mine'), { recursive: true });
    writeFileSync(join(claudeDir, 'skills', 'mine', 'SKILL.md'), '---\nname: mine\n---\n');
    writeFileSync(join(bus.home, '.claude.json'), JSON.stringify({ mcpServers: { other: { command: 'x' } } }));
    expect(runBin(['install'], { env }).exitCode).toBe(0);
    expect(runBin(['uninstall'], { env }).exitCode).toBe(0);
    expect(readdirSync(join(claudeDir, 'skills'))).toEqual(['mine']);
    expect(JSON.parse(readFileSync(join(bus.home, '.claude.json'), 'utf8')).mcpServers).toEqual({ other: { command: 'x' } });
  });
});

describe('attend install and PATH (issue #10)', () => {
  it('warns on stderr, with how to install from this checkout or a tarball, when attend is not on PATH', () => {
    const r = runBin(['install'], { env: { ...env, PATH: '/usr/bin:/bin' } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^attend: warning: attend is not on PATH: the hooks and the MCP server installed here run it by absolute path, but the model's Bash tool \(the skill's `attend send`\) needs it by name; install it: npm install -g \/\S+, or from a tarball: npm pack in \/\S+, then npm install -g \.\/attend-0\.1\.0\.tgz; or use the plugin \(attend is not published on the npm registry\)\n$/);
    const pkgRoot = /npm install -g (\S+),/.exec(r.stderr)![1]!;
    expect(JSON.parse(readFileSync(join(pkgRoot, 'package.json'), 'utf8')).name).toBe('attend');
  });

  it('says nothing when attend is on PATH', () => {
    const binDir = join(bus.dir, 'bin');
    mkdirSync(binDir);
    symlinkSync(BIN, join(binDir, 'attend'));
    const r = runBin(['install'], { env: { ...env, PATH: `${binDir}:/usr/bin:/bin` } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
  });
});
