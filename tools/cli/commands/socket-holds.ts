// What holds the deliverer's socket posts in a session (../shared/claude-code.md, "Delivery
// paths"): `crossSessionInbound` hold or refuse in a settings file, or the bypassPermissions
// mode (in settings, or on the Claude process's command line: `-p --dangerously-skip-permissions`
// is how workers are often started), where a post from outside the session's process tree
// waits for an approval nobody gives (the deliverer is detached from the hook that starts it;
// seen on 2.1.332: every post held). `attend doctor` names each. The SessionStart hook starts
// no deliverer under bypassPermissions, which holds the posts only because of where the
// deliverer runs, and tells the model to arm the Monitor, whose sensor is the session's own
// child; `crossSessionInbound` is the user's word on socket posts, so there the deliverer runs,
// its first post draws the receipt, and the messages come at the end of the turn.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ctx } from '../context.js';
import { readJsonObject } from './install.js';

/** The Claude process's arguments, from /proc (none where there is no /proc). */
function claudeArgs(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

interface Hold {
  /** bypassPermissions, or crossSessionInbound. */
  kind: 'bypass' | 'inbound';
  why: string;
}

/** Why this session would hold or refuse the deliverer's posts; empty: nothing does. */
export function socketHolds(ctx: Ctx, claudePid: number | undefined): Hold[] {
  const files = [join(ctx.paths.claudeDir, 'settings.json'), join(ctx.cwd, '.claude', 'settings.json'), join(ctx.cwd, '.claude', 'settings.local.json')];
  const found: Hold[] = [];
  for (const f of files) {
    let v: Record<string, unknown> | null | undefined;
    try {
      v = readJsonObject(f);
    } catch {
      // not there, or not JSON: the hooks check says so
    }
    if (!v) continue;
    if (v.crossSessionInbound === 'hold' || v.crossSessionInbound === 'refuse') found.push({ kind: 'inbound', why: `crossSessionInbound "${v.crossSessionInbound}" in ${f}` });
    const mode = (v.permissions as Record<string, unknown> | undefined)?.defaultMode;
    if (mode === 'bypassPermissions') found.push({ kind: 'bypass', why: `permissions.defaultMode "bypassPermissions" in ${f} (posts from outside the session are held for approval)` });
  }
  if (claudePid !== undefined) {
    const args = claudeArgs(claudePid);
    const mode = args.indexOf('--permission-mode');
    if (args.includes('--dangerously-skip-permissions') || (mode >= 0 && args[mode + 1] === 'bypassPermissions') || args.includes('--permission-mode=bypassPermissions')) {
      found.push({ kind: 'bypass', why: 'the session runs in bypassPermissions mode (its command line; posts from outside the session are held for approval)' });
    }
  }
  return found;
}
