// `attend install`: wire attend into Claude Code for users who do not use plugins (issue #6
// §2). Every file is merged, never overwritten blindly: a file that does not parse, or whose
// shape is foreign, stops the install with its path and nothing is written; a file that
// changes is backed up first; entries that are not attend's are left exactly as they were.

import { accessSync, chmodSync, constants, copyFileSync, existsSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ctx } from '../context.js';
import { AttendError, EXIT, usageError } from '../../wire/errors.js';
import { writeError, writeFileAtomic } from '../../bus/store/index.js';
import { foreign, makeSandboxDirs, mergeSandboxRules, sandboxRulesFor, sandboxWarnings } from './install-sandbox.js';

export type Scope = 'user' | 'project';

export interface InstallInput {
  scope?: string | undefined;
  dryRun?: boolean | undefined;
}

export interface Change {
  path: string;
  what: string;
  action: 'create' | 'update' | 'remove' | 'unchanged';
  backup: string | null;
}

export interface InstallResult {
  scope: Scope;
  dryRun: boolean;
  changes: Change[];
  /** What the user should know even though the install succeeded (attend not on PATH). */
  warnings?: string[];
}

/** The first executable `name` on PATH, or null. */
export function findOnPath(env: Readonly<Record<string, string | undefined>>, name: string): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      if (statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The package root this attend runs from (where package.json names "attend"), or null. The
 * package is not on the npm registry, so "how to install" points here (issue #10).
 */
function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'attend') return dir;
    } catch {
      // not here
    }
    dir = dirname(dir);
  }
  return null;
}

/** How to put `attend` on PATH: from this checkout, or from a tarball made with npm pack. */
export function howToInstall(): string {
  const root = packageRoot();
  const from = root ? `npm install -g ${root}` : 'npm install -g /path/to/attend (a checkout of the repository)';
  return `${from}, or from a tarball: npm pack in the checkout, then npm install -g ./attend-<version>.tgz; or use the plugin (attend is not published on the npm registry)`;
}

export const HOOK_EVENTS: Record<string, string> = {
  SessionStart: 'session-start',
  Stop: 'stop',
  SessionEnd: 'session-end',
};

/** The hook command: quiet and successful when attend is not on PATH (issue #6 §1). */
function hookCommand(verb: string): string {
  return `command -v attend >/dev/null 2>&1 && attend hook ${verb} || true`;
}

/** attend's own hook entries, in any version of the command this installer has written. */
function isAttendHook(command: unknown): boolean {
  return typeof command === 'string' && /(^|[\s;&|])attend hook (session-start|session-end|stop)\b/.test(command);
}

const MCP_ENTRY = { type: 'stdio', command: 'attend', args: ['mcp'] } as const;

export function isAttendMcp(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false;
  const e = entry as { command?: unknown; args?: unknown };
  return e.command === 'attend' && Array.isArray(e.args) && e.args[0] === 'mcp';
}

interface Targets {
  settings: string;
  skill: string;
  mcp: string;
  /** Where the MCP entry goes inside `mcp`: user scope shares Claude Code's own state file. */
  mcpLabel: string;
}

export function parseScope(raw: string | undefined): Scope {
  if (raw === undefined || raw === 'user') return 'user';
  if (raw === 'project') return 'project';
  throw usageError(`--scope takes user or project, not '${raw.slice(0, 40)}'`);
}

export function targetsFor(ctx: Ctx, scope: Scope): Targets {
  if (scope === 'project') {
    return { settings: join(ctx.cwd, '.claude', 'settings.json'), skill: join(ctx.cwd, '.claude', 'skills', 'attend', 'SKILL.md'), mcp: join(ctx.cwd, '.mcp.json'), mcpLabel: 'project .mcp.json' };
  }
  // Claude Code keeps user-scope MCP servers in .claude.json: in CLAUDE_CONFIG_DIR when set,
  // else in the home directory beside ~/.claude.
  const claudeJson = ctx.env.CLAUDE_CONFIG_DIR ? join(ctx.paths.claudeDir, '.claude.json') : join(ctx.paths.home, '.claude.json');
  return { settings: join(ctx.paths.claudeDir, 'settings.json'), skill: join(ctx.paths.claudeDir, 'skills', 'attend', 'SKILL.md'), mcp: claudeJson, mcpLabel: 'user MCP servers' };
}

function skillSource(): string {
  // dist/tools/cli/commands/install.js and tools/cli/commands/install.ts are both four
  // levels below the package root, where skills/ ships.
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../../..', '../../../..']) {
    const p = join(here, up, 'skills', 'attend', 'SKILL.md');
    if (existsSync(p)) return p;
  }
  throw new AttendError('the attend skill (skills/attend/SKILL.md) is missing from this installation', EXIT.environment, 'reinstall attend');
}

type Json = Record<string, unknown>;

/** Read a JSON object file; null when absent. Refuses (writing nothing) when it is not one. */
export function readJsonObject(path: string): Json | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new AttendError(`cannot read ${path}: ${(err as Error).message}`, EXIT.environment);
  }
  if (text.trim().length === 0) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new AttendError(`${path} is not valid JSON: ${(err as Error).message}`, EXIT.refused, 'fix or move the file, then re-run; nothing was written');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AttendError(`${path} does not hold a JSON object`, EXIT.refused, 'fix or move the file, then re-run; nothing was written');
  }
  return raw as Json;
}

/** Merge attend's hooks into a settings object; returns whether anything changed. */
function mergeHooks(settings: Json, path: string): boolean {
  if (settings.hooks !== undefined && (typeof settings.hooks !== 'object' || settings.hooks === null || Array.isArray(settings.hooks))) {
    throw foreign(path, '"hooks" is not an object');
  }
  const hooks = (settings.hooks ?? {}) as Json;
  let changed = false;
  for (const [event, verb] of Object.entries(HOOK_EVENTS)) {
    const groups = hooks[event] ?? [];
    if (!Array.isArray(groups)) throw foreign(path, `"hooks.${event}" is not an array`);
    const wanted = hookCommand(verb);
    let present = false;
    for (const g of groups as Json[]) {
      if (typeof g !== 'object' || g === null || !Array.isArray(g.hooks)) continue;
      for (const h of g.hooks as Json[]) {
        if (!isAttendHook(h?.command)) continue;
        if (h.command === wanted && !present) present = true;
        else {
          // An older attend command, or a duplicate: bring it to the current one.
          h.command = wanted;
          if (present) h.__drop = true;
          present = true;
          changed = true;
        }
      }
      g.hooks = (g.hooks as Json[]).filter((h) => !h?.__drop);
    }
    if (!present) {
      groups.push({ hooks: [{ type: 'command', command: wanted, timeout: 10 }] });
      changed = true;
    }
    hooks[event] = (groups as Json[]).filter((g) => !(Array.isArray(g?.hooks) && (g.hooks as unknown[]).length === 0));
  }
  if (changed) settings.hooks = hooks;
  return changed;
}

/** Remove attend's hooks; groups and events left empty by that removal go too. */
export function removeHooks(settings: Json, path: string): boolean {
  if (settings.hooks === undefined) return false;
  if (typeof settings.hooks !== 'object' || settings.hooks === null || Array.isArray(settings.hooks)) throw foreign(path, '"hooks" is not an object');
  const hooks = settings.hooks as Json;
  let changed = false;
  for (const event of Object.keys(hooks)) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    const kept: unknown[] = [];
    for (const g of groups as Json[]) {
      if (typeof g !== 'object' || g === null || !Array.isArray(g.hooks)) {
        kept.push(g);
        continue;
      }
      const inner = (g.hooks as Json[]).filter((h) => !isAttendHook(h?.command));
      if (inner.length !== (g.hooks as unknown[]).length) {
        changed = true;
        if (inner.length === 0) continue;
        kept.push({ ...g, hooks: inner });
      } else kept.push(g);
    }
    if (kept.length === 0 && (groups as unknown[]).length > 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (changed && Object.keys(hooks).length === 0) delete settings.hooks;
  return changed;
}

export function hasAttendHooks(settings: Json | null): string[] {
  const found: string[] = [];
  const hooks = settings?.hooks;
  if (typeof hooks !== 'object' || hooks === null) return found;
  for (const event of Object.keys(HOOK_EVENTS)) {
    const groups = (hooks as Json)[event];
    if (!Array.isArray(groups)) continue;
    if (groups.some((g: Json) => Array.isArray(g?.hooks) && (g.hooks as Json[]).some((h) => isAttendHook(h?.command)))) found.push(event);
  }
  return found;
}

function backupName(path: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  let candidate = `${path}.attend-${stamp}.bak`;
  for (let i = 2; existsSync(candidate); i++) candidate = `${path}.attend-${stamp}-${i}.bak`;
  return candidate;
}

/** Write `text` to `path` atomically, backing up what was there and keeping its mode. */
export function writeWithBackup(path: string, text: string, now: number, dryRun: boolean): string | null {
  const existed = existsSync(path);
  let backup: string | null = null;
  if (existed) backup = backupName(path, now);
  if (dryRun) return backup;
  const mode = existed ? statSync(path).mode & 0o777 : 0o644;
  if (existed && backup) {
    try {
      copyFileSync(path, backup);
    } catch (err) {
      // A full disk: no half backup left behind, and the file itself not touched.
      try {
        unlinkSync(backup);
      } catch {
        // never created
      }
      throw writeError(backup, err);
    }
  }
  writeFileAtomic(path, text);
  chmodSync(path, mode);
  return backup;
}

function jsonText(o: Json): string {
  return `${JSON.stringify(o, null, 2)}\n`;
}

export function runInstall(ctx: Ctx, input: InstallInput): InstallResult {
  const scope = parseScope(input.scope);
  const dryRun = input.dryRun ?? false;
  const t = targetsFor(ctx, scope);
  const skillText = readFileSync(skillSource(), 'utf8');
  // Read and check everything first, so a bad file stops the install before any write.
  const settings = readJsonObject(t.settings);
  const mcp = readJsonObject(t.mcp);
  const settingsNext: Json = structuredClone(settings ?? {});
  const hooksChanged = mergeHooks(settingsNext, t.settings);
  // The rules that keep the key directory out of Claude Code's sandbox while its sessions still
  // sign, through attend's signer (tools/cli/commands/install-sandbox.ts).
  const rules = sandboxRulesFor({ settings, keysDir: ctx.paths.keysDir, root: ctx.paths.root, home: ctx.paths.home });
  const sandboxChanged = mergeSandboxRules(settingsNext, rules, t.settings);
  const mcpNext: Json = structuredClone(mcp ?? {});
  if (mcpNext.mcpServers !== undefined && (typeof mcpNext.mcpServers !== 'object' || mcpNext.mcpServers === null || Array.isArray(mcpNext.mcpServers))) {
    throw foreign(t.mcp, '"mcpServers" is not an object');
  }
  const servers = (mcpNext.mcpServers ?? {}) as Json;
  const existing = servers.attend;
  if (existing !== undefined && !isAttendMcp(existing)) {
    throw new AttendError(`${t.mcp} already has an MCP server named "attend" that does not run \`attend mcp\``, EXIT.refused, 'rename or remove it, then re-run; nothing was written');
  }
  const mcpChanged = existing === undefined;
  if (mcpChanged) {
    servers.attend = scope === 'project' ? { command: MCP_ENTRY.command, args: [...MCP_ENTRY.args] } : { ...MCP_ENTRY, args: [...MCP_ENTRY.args], env: {} };
    mcpNext.mcpServers = servers;
  }
  let skillCurrent: string | null = null;
  try {
    skillCurrent = readFileSync(t.skill, 'utf8');
  } catch {
    skillCurrent = null;
  }

  const now = ctx.now();
  const changes: Change[] = [];
  const settingsChanged = hooksChanged || sandboxChanged;
  if (!dryRun) makeSandboxDirs(rules, ctx.paths.root);
  changes.push({
    path: t.settings,
    what: `hooks (SessionStart, Stop, SessionEnd) and sandbox rules (key directory unreadable, signer ${rules.signer})`,
    action: !settingsChanged ? 'unchanged' : settings === null ? 'create' : 'update',
    backup: settingsChanged ? writeWithBackup(t.settings, jsonText(settingsNext), now, dryRun) : null,
  });
  const skillChanged = skillCurrent !== skillText;
  changes.push({
    path: t.skill,
    what: 'skill',
    action: !skillChanged ? 'unchanged' : skillCurrent === null ? 'create' : 'update',
    backup: skillChanged ? writeWithBackup(t.skill, skillText, now, dryRun) : null,
  });
  changes.push({
    path: t.mcp,
    what: `MCP server "attend" (${t.mcpLabel})`,
    action: !mcpChanged ? 'unchanged' : mcp === null ? 'create' : 'update',
    backup: mcpChanged ? writeWithBackup(t.mcp, jsonText(mcpNext), now, dryRun) : null,
  });
  // The hooks and the MCP entry run `attend` by name: without it on PATH they do nothing.
  const warnings = findOnPath(ctx.env, 'attend') ? [] : [`attend is not on PATH, so the hooks and the MCP server installed here will do nothing until it is; install it: ${howToInstall()}`];
  warnings.push(...sandboxWarnings(settingsNext));
  return { scope, dryRun, changes, warnings };
}
