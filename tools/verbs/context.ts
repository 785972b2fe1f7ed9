// The context every verb runs in: paths, identity, clock, env, a warn sink. No standard
// streams (they belong to the front ends) and no module state (docs/architecture.md, "Layers").

import { hostname } from 'node:os';
import type { Identity, IdentityReaders, ProcInfo } from '../identity/resolve.js';
import { findParent } from '../identity/lineage.js';
import { hasParentRecord, recordParent, useKeyDirectory } from '../bus/trust/index.js';
import { type Signer, type SignerAddress, createRemoteSigner, createSigner, inClaudeSandbox, sandboxSigner, signerSession } from '../bus/trust/index.js';
import { normalizeOrigin, resolveIdentity, resolveStartedFor } from '../identity/resolve.js';
import { refusedError } from '../wire/errors.js';
import { localHostName } from '../bus/presence/index.js';
import { procInfo as systemProcInfo, systemReaders, userName } from '../identity/system.js';
import { type Peer, listLive } from '../bus/presence/index.js';
import { checkRootPath, ensureRoot } from '../bus/store/index.js';
import { type Reporter, createReporter } from '../bus/store/index.js';
import { createIdFactory } from '../wire/ids.js';
import { sanitizeMemberId } from '../wire/envelope.js';
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
  /** Signs what this context writes; the key loads on the first signature (issue 14). */
  signer(): Signer;
  /**
   * Record the parent of live sessions attend has not seen yet (a recipient that never ran
   * attend), from their process tree, so groups hold before the session's first command.
   */
  noteLineage(sessions: { id: string; pid: number }[]): void;
}

interface VerbCtxOptions {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  pid: number;
  now?: () => number;
  warn?: (line: string) => void;
  procInfo?: (pid: number) => ProcInfo | null;
  /**
   * 'human': this front end is the person's own (`attend chat`): it resolves as usual and
   * refuses, exit 4, unless the result is the person, so a session cannot speak as the person
   * by driving chat through a pseudo-terminal (issue 14 §6).
   */
  identity?: 'resolve' | 'human';
  /**
   * The person's name for a caller that runs attend in its own process (tests that need two
   * people on one bus). No flag or environment variable reaches it: a program that can set
   * it can as well write any file under the bus, so it proves nothing a reader relies on.
   */
  userName?: string;
  /**
   * For a conduit that resolved its identity from its ancestry when it started and has since
   * lost that ancestry (the deliverer, detached from the hook that started it): the claude
   * process it resolved to. Its session is who this context is, as that process's record
   * says now. Set only from a resolution, never from a flag or the environment.
   */
  startedFor?: { pid: number; start?: string };
}

export function createVerbCtx(opts: VerbCtxOptions): VerbCtx {
  const { env, cwd, pid } = opts;
  const paths = resolvePaths(env);
  // Readers of this bus verify its local nodes against the records beside this key directory
  // (tools/bus/trust/anchors.ts); readMessage takes only the root, so it is said once here.
  useKeyDirectory(paths.root, paths.keysDir);
  const now = opts.now ?? Date.now;
  const warn = opts.warn ?? (() => {});
  const procInfo = opts.procInfo ?? systemProcInfo;
  let identity: Identity | undefined;
  let live: Peer[] | undefined;
  let rootChecked = false;
  let signer: Signer | undefined;
  // Inside Claude Code's sandbox the session's process is out of sight (its own pid namespace)
  // and the key directory out of reach: who this is, and its signatures, come from attend's
  // signer outside (tools/bus/trust/signer.ts; docs/trust.md, "Inside Claude Code's sandbox").
  let sandboxed: boolean | undefined;
  const inSandbox = () => (sandboxed ??= inClaudeSandbox(env));
  let readers: IdentityReaders | undefined;
  const readersOf = () => {
    if (readers === undefined) {
      const system = systemReaders({ env, sessionsDir: paths.sessionsDir, cwd, pid });
      readers = opts.userName !== undefined ? { ...system, username: () => opts.userName as string } : system;
    }
    return readers;
  };
  const ctx: VerbCtx = {
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
      if (identity === undefined && inSandbox()) {
        if (opts.identity === 'human') throw refusedError("attend chat is the person's terminal, and this process runs in Claude Code's sandbox", 'run attend chat from a terminal that no agent started');
        identity = sandboxIdentity(signerFor(env), paths.root, cwd, sanitizeMemberId(opts.userName ?? userName()));
      }
      if (identity === undefined) {
        const who = opts.startedFor ? resolveStartedFor(readersOf(), opts.startedFor) : resolveIdentity(readersOf());
        // Nothing acts as an identity attend could not settle (issue 14 §6): not the session
        // whose variables it carries, and never the person.
        if (who.refused !== undefined) throw refusedError(`refused: ${who.refused}`, 'a person runs attend from a terminal that no Claude Code session started');
        if (opts.identity === 'human' && who.kind !== 'human') {
          throw refusedError(`attend chat is the person's terminal, and this process is ${who.kind === 'agent' && who.sessionId ? `Claude Code session ${who.sessionId}` : `the agent ${who.id}`} (${who.reason})`, 'run attend chat from a terminal that no agent started');
        }
        identity = who;
        noteLineage(() => ctx.root(), identity, readersOf());
      }
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
    signer() {
      // The signed origin host is this machine's name on the hub when it has one, so other
      // machines read its messages as this machine's (issue 13; tools/bus/trust/origin.ts).
      signer ??= inSandbox() ? createRemoteSigner(signerFor(env), ctx.root()) : createSigner({ keysDir: paths.keysDir, root: ctx.root(), host: localHostName(ctx.root()) ?? hostname(), now, warn });
      return signer;
    },
    noteLineage(sessions) {
      // Only from a process tree in sight: inside the sandbox (or for a process this one cannot
      // see) the climb would find no ancestor and take the person for the parent.
      if (inSandbox()) return;
      const user = ctx.identity().user;
      for (const s of sessions) if (readersOf().procInfo(s.pid) !== null) noteLineage(() => ctx.root(), { kind: 'agent', id: s.id, pid: s.pid, user }, readersOf());
    },
  };
  return ctx;
}

/** The signer a command inside the sandbox asks; without one it cannot tell who it is, nor sign. */
function signerFor(env: Readonly<Record<string, string | undefined>>): SignerAddress {
  const addr = sandboxSigner(env);
  if (addr) return addr;
  throw refusedError(
    "refused: this process runs in Claude Code's sandbox, where attend cannot see its session or read a key, and no signer is named (ATTEND_SIGNER)",
    'run attend install (it adds the sandbox rules and the signer), then start the session again',
  );
}

/**
 * The session the signer found at the other end of this process's request. Its lineage is the
 * SessionStart hook's to record (outside the sandbox, where the ancestry can be seen).
 */
function sandboxIdentity(addr: SignerAddress, root: string, cwd: string, user: string): Identity {
  const s = signerSession(addr);
  if (s.root !== root) {
    throw refusedError(`attend's signer signs for the bus ${s.root}, and this command uses ${root}`, 'run attend with the ATTEND_HOME the session was started with');
  }
  const record = { pid: s.pid, sessionId: s.sessionId, ...(s.cwd !== undefined ? { cwd: s.cwd } : {}), ...(s.name !== undefined ? { name: s.name } : {}), ...(s.kind !== undefined ? { kind: s.kind } : {}) };
  return {
    resolved: true,
    reason: `inside Claude Code's sandbox: attend's signer found session ${s.sessionId} (claude pid ${s.pid}) at the other end of this request`,
    kind: 'agent',
    id: s.sessionId,
    from: `claude:${s.sessionId}`,
    origin: normalizeOrigin(s.cwd ?? cwd),
    user,
    sessionId: s.sessionId,
    pid: s.pid,
    record,
    via: 'ancestry',
  };
}

/** Record a session's parent the first time attend sees it (issue 14 §1); best effort. */
function noteLineage(getRoot: () => string, who: Pick<Identity, 'kind' | 'id' | 'pid' | 'user' | 'cliPid'>, readers: IdentityReaders): void {
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
