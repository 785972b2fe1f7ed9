// `attend install` / `attend uninstall` against real files in a temporary HOME: merged,
// idempotent, backed up, never clobbering foreign hooks, refusing malformed files untouched.

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type TempBus, makeTempBus, runBin } from '../helpers/bus.js';

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
    expect(settings.hooks.PreToolUse).toEqual(foreignSettings.hooks.PreToolUse);
    expect(settings.hooks.Stop[0]).toEqual(foreignSettings.hooks.Stop[0]);
    expect(settings.hooks.Stop[1].hooks[0].command).toMatch(/attend hook stop/);
    expect(settings.hooks.SessionStart[0].hooks[0].command).toMatch(/attend hook session-start/);
    expect(settings.hooks.SessionEnd[0].hooks[0].command).toMatch(/attend hook session-end/);

    const backup = result.changes[0]!.backup!;
    expect(JSON.parse(readFileSync(backup, 'utf8'))).toEqual(foreignSettings);
    expect(readFileSync(join(claudeDir, 'skills', 'attend', 'SKILL.md'), 'utf8')).toMatch(/^---\nname: attend\n/);
    const claudeJson = JSON.parse(readFileSync(join(bus.home, '.claude.json'), 'utf8'));
    expect(claudeJson.numStartups).toBe(3);
    expect(claudeJson.mcpServers.other).toEqual({ command: 'x' });
    expect(claudeJson.mcpServers.attend).toMatchObject({ command: 'attend', args: ['mcp'] });
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
    expect(JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: { attend: { command: 'attend', args: ['mcp'] } } });
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
    expect(r.stderr).toMatch(/^attend: warning: attend is not on PATH, so the hooks and the MCP server installed here will do nothing until it is; install it: npm install -g \/\S+, or from a tarball: npm pack in the checkout, then npm install -g \.\/attend-<version>\.tgz; or use the plugin \(attend is not published on the npm registry\)\n$/);
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
