// `attend install`: wire attend into Claude Code for users who do not use plugins (issue #6
// §2). Every file is merged, never overwritten blindly: a file that does not parse, or whose
// shape is foreign, stops the install with its path and nothing is written; a file that
// changes is backed up first; entries that are not attend's are left exactly as they were.

import { accessSync, chmodSync, constants, copyFileSync, existsSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ctx } from '../context.js';
import { VERSION } from '../version.js';
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

/** Whether `path` is a file this process may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, or null. */
export function findOnPath(env: Readonly<Record<string, string | undefined>>, name: string): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    if (isExecutableFile(p)) return p;
  }
  return null;
}

/**
 * The package root this attend runs from (where package.json names "attend"), or null. The
 * package is not on the npm registry, so "how to install" points here (issue #10).
 */
export function packageRoot(): string | null {
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

/**
 * Where npm links the `attend` of a global install whose package lives at `root`
 * (<prefix>/lib/node_modules/attend, or <prefix>/node_modules/attend on Windows), or null when
 * `root` is a checkout.
 */
export function globalBinFor(root: string): string | null {
  const parent = dirname(root);
  if (basename(parent) !== 'node_modules') return null;
  const lib = dirname(parent);
  return basename(lib) === 'lib' ? join(dirname(lib), 'bin') : lib;
}

/**
 * How to put `attend` on PATH. From a checkout: npm install -g <checkout> (a link to it, as
 * npm link makes), or a tarball of it; from a global install that is not on PATH: its bin
 * directory. Every command named here works as written (the package is not on the registry).
 */
export function howToInstall(): string {
  const root = packageRoot();
  if (root === null) return 'npm install -g /path/to/attend (a built checkout of the repository); or use the plugin (attend is not published on the npm registry)';
  const bin = globalBinFor(root);
  if (bin !== null) return `attend is installed in ${root}; put its bin directory on PATH: export PATH="${bin}:$PATH" (in ~/.profile, which login shells read)`;
  return `npm install -g ${root}, or from a tarball: npm pack in ${root}, then npm install -g ./attend-${VERSION}.tgz; or use the plugin (attend is not published on the npm registry)`;
}

export const HOOK_EVENTS: Record<string, string> = {
  SessionStart: 'session-start',
  PreToolUse: 'pre-tool-use',
  Stop: 'stop',
  SessionEnd: 'session-end',
};

/** The tools a hook runs for, where it is not every call: the claim check (issue 23 §2), as hooks/hooks.json has it. */
const HOOK_MATCHERS: Record<string, string> = { PreToolUse: 'Edit|Write|MultiEdit|NotebookEdit|Bash' };

/** A word for sh, quoted when it needs to be. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What the hooks and the MCP server run: this node and this attend's build, both absolute, so
 * they work whatever PATH Claude Code has (the first hour, item 1). A checkout without a build
 * is refused: the entries would point at nothing.
 */
export function attendCommand(): { node: string; cli: string } {
  const root = packageRoot();
  const cli = root ? join(root, 'dist', 'tools', 'cli', 'attend.cjs') : null;
  if (!root || !cli || !existsSync(cli)) {
    throw new AttendError(`this attend has no build${cli ? ` (${cli} is missing)` : ''}`, EXIT.environment, root ? `run npm run build in ${root}, then attend install again` : 'reinstall attend');
  }
  return { node: process.execPath, cli };
}

/** The hook command: node and the CLI by absolute path, never PATH. */
export function hookCommand(verb: string, cmd: { node: string; cli: string }): string {
  return `${shellQuote(cmd.node)} ${shellQuote(cmd.cli)} hook ${verb}`;
}

/**
 * attend's own hook entries, in any version of the command an installer wrote: `attend hook
 * <event>` by name (before absolute paths), or `<node> <…/attend.cjs> hook <event>`.
 */
export function isAttendHook(command: unknown): boolean {
  return typeof command === 'string' && /(^|[\s;&|'"/])attend(\.cjs)?['"]?\s+hook\s+(session-start|session-end|stop|pre-tool-use)\b/.test(command);
}

/** The MCP entry install writes: node and the CLI by absolute path. */
export function mcpEntry(cmd: { node: string; cli: string }, scope: Scope): Json {
  const base = { command: cmd.node, args: [cmd.cli, 'mcp'] };
  return scope === 'project' ? base : { type: 'stdio', ...base, env: {} };
}

/** An MCP entry that runs `attend mcp`: by name (older installs), or node and an attend.cjs. */
export function isAttendMcp(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false;
  const e = entry as { command?: unknown; args?: unknown };
  if (!Array.isArray(e.args) || typeof e.command !== 'string') return false;
  if (e.command === 'attend' || /\/attend$/.test(e.command)) return e.args[0] === 'mcp';
  return e.args.length === 2 && typeof e.args[0] === 'string' && /(^|\/)attend(\.cjs)?$/.test(e.args[0]) && e.args[1] === 'mcp';
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
function mergeHooks(settings: Json, path: string, cmd: { node: string; cli: string }): boolean {
  if (settings.hooks !== undefined && (typeof settings.hooks !== 'object' || settings.hooks === null || Array.isArray(settings.hooks))) {
    throw foreign(path, '"hooks" is not an object');
  }
  const hooks = (settings.hooks ?? {}) as Json;
  let changed = false;
  for (const [event, verb] of Object.entries(HOOK_EVENTS)) {
    const groups = hooks[event] ?? [];
    if (!Array.isArray(groups)) throw foreign(path, `"hooks.${event}" is not an array`);
    const wanted = hookCommand(verb, cmd);
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
      const matcher = HOOK_MATCHERS[event];
      groups.push({ ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command', command: wanted, timeout: matcher !== undefined ? 5 : 10 }] });
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
  const cmd = attendCommand();
  const hooksChanged = mergeHooks(settingsNext, t.settings, cmd);
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
  // An entry an older install wrote (attend by name, or another node or checkout) is brought
  // to this one; the user's own env for it stays.
  const wantedMcp = mcpEntry(cmd, scope);
  if (existing !== undefined && (existing as Json).env !== undefined && scope !== 'project') wantedMcp.env = (existing as Json).env;
  const mcpChanged = existing === undefined || JSON.stringify(existing) !== JSON.stringify(wantedMcp);
  if (mcpChanged) {
    servers.attend = wantedMcp;
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
    what: `hooks (SessionStart, PreToolUse, Stop, SessionEnd) and sandbox rules (key directory unreadable, signer ${rules.signer})`,
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
  // The hooks and the MCP entry run attend by absolute path; the model's Bash tool and other
  // agents still run `attend` by name.
  const warnings = findOnPath(ctx.env, 'attend') ? [] : [`attend is not on PATH: the hooks and the MCP server installed here run it by absolute path, but the model's Bash tool (the skill's \`attend send\`) needs it by name; install it: ${howToInstall()}`];
  warnings.push(...sandboxWarnings(settingsNext));
  return { scope, dryRun, changes, warnings };
}
