// Which project a file belongs to (issue 23 §2): two git worktrees or clones of one
// repository on this machine are one project, so a claim made in one holds in the other.
// A repository is known by its root commit (the same in every clone and worktree), found
// once per git directory and cached on the bus; a file outside any repository is its own
// absolute path in the project `dir:/`.

import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';

export interface FileKey {
  /** `git:<root commit>`, `gitdir:<common git dir>` (a repository with no commit yet) or `dir:/`. */
  project: string;
  /** The work tree the file is in (absolute), or `/` outside a repository. */
  worktree: string;
  /** The file's path from the work tree root, `/`-separated. */
  rel: string;
}

/** The root commit of the repository whose git directory this is, or null (no commit, no git). */
export type RootCommitReader = (gitDir: string) => string | null;

/** `git rev-list --max-parents=0 HEAD`: the smallest of the root commits, so every clone agrees. */
export const gitRootCommit: RootCommitReader = (gitDir) => {
  // Loaded here, not at the top: the PreToolUse hook imports this module, and child_process
  // (with net and streams behind it) costs its start a few ms it only needs on a cache miss.
  const { spawnSync } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
  const r = spawnSync('git', ['--git-dir', gitDir, 'rev-list', '--max-parents=0', 'HEAD'], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] });
  if (r.status !== 0 || typeof r.stdout !== 'string') return null;
  const roots = r.stdout.split('\n').filter((l) => /^[0-9a-f]{40,64}$/.test(l)).sort();
  return roots[0] ?? null;
};

function reposCache(root: string): string {
  return join(stateDir(root), 'claims', 'repos.json');
}

/** The path with symlinks resolved as far as it exists (a file being created does not yet). */
function realish(abs: string): string {
  const tail: string[] = [];
  let at = abs;
  for (;;) {
    try {
      return tail.length === 0 ? realpathSync(at) : join(realpathSync(at), ...tail.reverse());
    } catch {
      const up = dirname(at);
      if (up === at) return abs;
      tail.push(at.slice(up.length + (up.endsWith(sep) ? 0 : 1)));
      at = up;
    }
  }
}

/** The work tree holding `abs` and its common git directory, from the `.git` entries alone (no git process). */
function findRepository(abs: string): { worktree: string; commonDir: string } | null {
  for (let dir = abs; ; ) {
    const dotGit = join(dir, '.git');
    let st;
    try {
      st = lstatSync(dotGit);
    } catch {
      st = null;
    }
    if (st?.isDirectory()) return { worktree: dir, commonDir: dotGit };
    if (st?.isFile()) {
      // A linked worktree (`gitdir: <main>/.git/worktrees/<name>`, whose `commondir` names the
      // main git directory) or a submodule (`gitdir: <super>/.git/modules/<name>`, no commondir).
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readTextIfAny(dotGit) ?? '');
      if (m) {
        const gitDir = resolve(dir, m[1] as string);
        const common = readTextIfAny(join(gitDir, 'commondir'))?.trim();
        return { worktree: dir, commonDir: common ? resolve(gitDir, common) : gitDir };
      }
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The repository's identity, cached on the bus by its git directory: a root commit never changes. */
function repositoryId(root: string, commonDir: string, readRoot: RootCommitReader): string {
  const file = reposCache(root);
  let cache: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) cache = parsed as Record<string, string>;
  } catch {
    // no cache yet, or a torn one: rebuilt below
  }
  const known = cache[commonDir];
  if (typeof known === 'string' && known.startsWith('git:')) return known;
  const commit = readRoot(commonDir);
  // A repository with no commit yet is known by its git directory until it has one.
  if (commit === null) return `gitdir:${commonDir}`;
  const id = `git:${commit}`;
  try {
    writeFileAtomic(file, JSON.stringify({ ...cache, [commonDir]: id }), { sync: false });
  } catch {
    // a cache that cannot be written costs one git run next time, nothing else
  }
  return id;
}

/** Where `path` (absolute, or relative to `cwd`) is, as claims key it. */
export function keyOf(root: string, path: string, cwd: string, readRoot: RootCommitReader = gitRootCommit): FileKey {
  const abs = realish(isAbsolute(path) ? resolve(path) : resolve(cwd, path));
  const repo = findRepository(abs);
  if (repo === null) return { project: 'dir:/', worktree: '/', rel: abs.replace(/^\/+/, '') };
  const rel = relative(repo.worktree, abs).split(sep).join('/');
  return { project: repositoryId(root, repo.commonDir, readRoot), worktree: repo.worktree, rel };
}
