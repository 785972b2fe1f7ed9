// The context every verb runs in: paths, identity, clock, env, a warn sink. No standard
// streams (they belong to the front ends) and no module state (docs/architecture.md, "Layers").

import type { Identity, ProcInfo } from '../identity/resolve.js';
import { humanIdentity, resolveIdentity } from '../identity/resolve.js';
import { procInfo as systemProcInfo, systemReaders } from '../identity/system.js';
import { type Peer, listLive } from '../bus/roster.js';
import { checkRootPath, ensureRoot } from '../bus/root.js';
import { type Reporter, createReporter } from '../bus/signals.js';
import { createIdFactory } from '../wire/ids.js';
import { type Paths, resolvePaths } from './env.js';

export interface VerbCtx {
  env: Readonly<Record<string, string | undefined>>;
  paths: Paths;
  cwd: string;
  pid: number;
  now(): number;
  newId(): string;
  /** Diagnostics that do not stop the verb (a skipped file, a rebuilt ledger). */
  warn(line: string): void;
  reporter: Reporter;
  procInfo(pid: number): ProcInfo | null;
  /** Resolved once per context. */
  identity(): Identity;
  /** The live roster, read once per context. */
  live(): Peer[];
  /** The bus root, created and checked on first use. */
  root(): string;
}

export interface VerbCtxOptions {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  pid: number;
  now?: () => number;
  warn?: (line: string) => void;
  procInfo?: (pid: number) => ProcInfo | null;
  /** 'human' skips resolution: `attend chat` always writes as the human (docs/architecture.md, "Identity"). */
  identity?: 'resolve' | 'human';
}

export function createVerbCtx(opts: VerbCtxOptions): VerbCtx {
  const { env, cwd, pid } = opts;
  const paths = resolvePaths(env);
  const now = opts.now ?? Date.now;
  const warn = opts.warn ?? (() => {});
  const procInfo = opts.procInfo ?? systemProcInfo;
  let identity: Identity | undefined;
  let live: Peer[] | undefined;
  let rootChecked = false;
  return {
    env,
    paths,
    cwd,
    pid,
    now,
    warn,
    newId: createIdFactory({ now, pid, random: Math.random }),
    reporter: createReporter(warn),
    procInfo,
    identity() {
      const readers = systemReaders({ env, sessionsDir: paths.sessionsDir, cwd, pid });
      identity ??= opts.identity === 'human' ? humanIdentity(readers, 'attend chat always writes as the human') : resolveIdentity(readers);
      return identity;
    },
    live() {
      checkRootPath(paths.root); // a relative ATTEND_HOME is refused before anything is read (issue #10)
      live ??= listLive({ root: paths.root, sessionsDir: paths.sessionsDir, now: now(), procInfo });
      return live;
    },
    root() {
      if (!rootChecked) {
        ensureRoot(paths.root);
        rootChecked = true;
      }
      return paths.root;
    },
  };
}
