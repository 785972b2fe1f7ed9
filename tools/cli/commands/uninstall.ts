// `attend uninstall`: take out what `attend install` put in, and nothing else. Hooks that are
// not attend's stay; a skill or MCP entry that is not attend's stays; changed files are backed up.

import { readFileSync, rmSync, rmdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Ctx } from '../context.js';
import { removeSandboxRules, sandboxRulesFor } from './install-sandbox.js';
import { type Change, type InstallInput, type InstallResult, isAttendMcp, parseScope, readJsonObject, removeHooks, targetsFor, writeWithBackup } from './install.js';

function isOurSkill(text: string): boolean {
  return /^---\s*\nname:\s*attend\s*\n/.test(text);
}

export function runUninstall(ctx: Ctx, input: InstallInput): InstallResult {
  const scope = parseScope(input.scope);
  const dryRun = input.dryRun ?? false;
  const t = targetsFor(ctx, scope);
  const settings = readJsonObject(t.settings);
  const mcp = readJsonObject(t.mcp);
  const now = ctx.now();
  const changes: Change[] = [];

  const settingsNext = structuredClone(settings ?? {});
  const hooksChanged = settings !== null && removeHooks(settingsNext, t.settings);
  // Only a settings file that names a signer has attend's sandbox rules (no port is chosen here).
  const signer = (settings?.env as Record<string, unknown> | undefined)?.ATTEND_SIGNER;
  const sandboxChanged =
    settings !== null && typeof signer === 'string' && removeSandboxRules(settingsNext, sandboxRulesFor({ settings, keysDir: ctx.paths.keysDir, root: ctx.paths.root, home: ctx.paths.home }), t.settings);
  const settingsChanged = hooksChanged || sandboxChanged;
  const servers = mcp?.mcpServers;
  const mcpNext = structuredClone(mcp ?? {});
  const mcpChanged = typeof servers === 'object' && servers !== null && isAttendMcp((servers as Record<string, unknown>).attend);
  if (mcpChanged) {
    delete (mcpNext.mcpServers as Record<string, unknown>).attend;
    // Leave no empty `"mcpServers": {}` behind (issue #10).
    if (Object.keys(mcpNext.mcpServers as Record<string, unknown>).length === 0) delete mcpNext.mcpServers;
  }

  changes.push({
    path: t.settings,
    what: 'hooks and sandbox rules',
    action: settingsChanged ? 'update' : 'unchanged',
    backup: settingsChanged ? writeWithBackup(t.settings, `${JSON.stringify(settingsNext, null, 2)}\n`, now, dryRun) : null,
  });
  let skill: string | null = null;
  try {
    skill = readFileSync(t.skill, 'utf8');
  } catch {
    skill = null;
  }
  const skillOurs = skill !== null && isOurSkill(skill);
  if (skillOurs && !dryRun) {
    rmSync(t.skill, { force: true });
    // skills/attend, then skills/ itself when that leaves it empty (issue #10); rmdir never
    // removes a directory with anything else in it.
    for (const dir of [dirname(t.skill), dirname(dirname(t.skill))]) {
      try {
        rmdirSync(dir);
      } catch {
        break; // something else lives there too: leave it
      }
    }
  }
  changes.push({ path: t.skill, what: 'skill', action: skillOurs ? 'remove' : 'unchanged', backup: null });
  changes.push({
    path: t.mcp,
    what: 'MCP server "attend"',
    action: mcpChanged ? 'update' : 'unchanged',
    backup: mcpChanged ? writeWithBackup(t.mcp, `${JSON.stringify(mcpNext, null, 2)}\n`, now, dryRun) : null,
  });
  return { scope, dryRun, changes };
}
