// ctx carries everything from outside: paths, identity, clock, env, streams. No module state.

import type { Identity, IdentityReaders, ProcInfo } from '../identity/resolve.js';
import { findParent } from '../identity/lineage.js';
import { hasParentRecord, recordParent } from '../bus/lineage.js';
import { humanIdentity, resolveIdentity } from '../identity/resolve.js';
import { procInfo, systemReaders } from '../identity/system.js';
import { type Peer, listLive } from '../bus/roster.js';
import { ensureRoot } from '../bus/root.js';
import { type Reporter, createReporter } from '../bus/signals.js';
import { type Signer, createSigner } from '../bus/signing.js';
import { hostname } from 'node:os';
import { createIdFactory } from '../wire/ids.js';
import { type Paths, resolvePaths } from './env.js';

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface Ctx {
  env: Readonly<Record<string, string | undefined>>;
  paths: Paths;
  cwd: string;
  pid: number;
  now(): number;
  newId(): string;
  stdout: Output;
  stderr: Output;
  stdin: NodeJS.ReadableStream;
  reporter: Reporter;
  procInfo(pid: number): ProcInfo | null;
  /** Resolved once per invocation. */
  identity(): Identity;
  /** The live roster, read once per invocation. */
  live(): Peer[];
  /** The bus root, created and checked on first use. */
  root(): string;
  /** Signs what this invocation writes; the key loads on the first signature (issue 14). */
  signer(): Signer;
}

export interface CtxOptions {
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  pid?: number;
  stdout?: Output;
  stderr?: Output;
  stdin?: NodeJS.ReadableStream;
  now?: () => number;
  /** 'human' skips resolution: `attend chat` always writes as the human (spec §4). */
  identity?: 'resolve' | 'human';
}

const guarded = new WeakSet<object>();

/** Record a session's parent the first time attend sees it (issue 14 §1); best effort. */
function noteLineage(getRoot: () => string, who: Identity, readers: IdentityReaders): void {
  if (who.kind !== 'agent') return;
  try {
    const root = getRoot();
    if (hasParentRecord(root, who.id)) return;
    const parent = findParent(who, readers);
    if (parent !== undefined) recordParent(root, who.id, parent);
  } catch {
    // lineage is advisory for display and groups; a read-only bus must not stop a send
  }
}

/**
 * A reader that goes away early (`attend inbox | head`) closes the pipe: what it wanted has
 * been written, so the command ends quietly instead of dying on an unhandled EPIPE.
 */
function quietOnClosedPipe<T extends NodeJS.WritableStream>(stream: T): T {
  if (!guarded.has(stream)) {
    guarded.add(stream);
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
      throw err;
    });
  }
  return stream;
}

export function createContext(opts: CtxOptions = {}): Ctx {
  const env = opts.env ?? process.env;
  const paths = resolvePaths(env);
  const cwd = opts.cwd ?? process.cwd();
  const pid = opts.pid ?? process.pid;
  const now = opts.now ?? Date.now;
  // The standard streams are created on first touch, which costs ~3 ms each (it loads
  // node's stream machinery); `attend send` never touches stdin, so they stay lazy.
  const stderr = (): Output => opts.stderr ?? quietOnClosedPipe(process.stderr);
  let identity: Identity | undefined;
  let live: Peer[] | undefined;
  let rootChecked = false;
  let signer: Signer | undefined;
  const ctx: Ctx = {
    env,
    paths,
    cwd,
    pid,
    now,
    newId: createIdFactory({ now, pid, random: Math.random }),
    get stdout() {
      return opts.stdout ?? quietOnClosedPipe(process.stdout);
    },
    get stderr() {
      return stderr();
    },
    get stdin() {
      return opts.stdin ?? process.stdin;
    },
    reporter: createReporter((line) => stderr().write(`${line}\n`)),
    procInfo,
    identity() {
      const readers = systemReaders({ env, sessionsDir: paths.sessionsDir, cwd, pid });
      if (identity === undefined) {
        identity = opts.identity === 'human' ? humanIdentity(readers, 'attend chat always writes as the human') : resolveIdentity(readers);
        noteLineage(() => ctx.root(), identity, readers);
      }
      return identity;
    },
    live() {
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
    signer() {
      signer ??= createSigner({ keysDir: paths.keysDir, root: ctx.root(), host: hostname(), now });
      return signer;
    },
  };
  return ctx;
}
