// The one module that reads environment variables and home directories (style: "One module
// reads environment variables"). Everything else receives these values through ctx.

import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import envPaths from 'env-paths';

export interface Paths {
  /** The bus root: $ATTEND_HOME, else the user cache dir (docs/architecture.md, "The bus on disk"). */
  root: string;
  /** Claude Code's config dir: $CLAUDE_CONFIG_DIR, else ~/.claude. */
  claudeDir: string;
  sessionsDir: string;
  projectsDir: string;
  home: string;
}

export function resolvePaths(env: Readonly<Record<string, string | undefined>>): Paths {
  const home = env.HOME && env.HOME.length > 0 ? env.HOME : homedir();
  // A relative ATTEND_HOME is kept as given, never resolved against the cwd: it would name a
  // different bus in every directory. The bus root check refuses it (issue #10, exit 3).
  const attendHome = env.ATTEND_HOME && env.ATTEND_HOME.length > 0 ? env.ATTEND_HOME : undefined;
  const root = attendHome !== undefined ? (isAbsolute(attendHome) ? resolve(attendHome) : attendHome) : cacheRoot(env, home);
  const claudeDir = env.CLAUDE_CONFIG_DIR && env.CLAUDE_CONFIG_DIR.length > 0 ? resolve(env.CLAUDE_CONFIG_DIR) : join(home, '.claude');
  return {
    root,
    claudeDir,
    sessionsDir: join(claudeDir, 'sessions'),
    projectsDir: join(claudeDir, 'projects'),
    home,
  };
}

/**
 * The user cache dir, env-paths' rule. On Linux the rule is applied to the env we were
 * given (env-paths reads process.env once at import), so an injected env decides the root
 * the same way a child process's own env would.
 */
function cacheRoot(env: Readonly<Record<string, string | undefined>>, home: string): string {
  if (process.platform !== 'linux') return envPaths('attend', { suffix: '' }).cache;
  const xdg = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.length > 0 && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(home, '.cache');
  return join(xdg, 'attend');
}
