// Who am I (docs/architecture.md, "Identity"). A pure resolver over injected readers, so every branch is testable
// without a real Claude Code: the env fast path checked against the session record and the
// process start time, then a climb of the process ancestry, then the human fallback.

import { sanitizeMemberId } from '../wire/envelope.js';

export interface SessionRecord {
  pid: number;
  sessionId: string;
  cwd?: string;
  procStart?: string;
  name?: string;
  nameSource?: string;
  status?: string;
  kind?: string;
  updatedAt?: number;
  startedAt?: number;
  /** The Claude Code version that wrote the record (e.g. `2.1.332`). */
  version?: string;
}

export interface ProcInfo {
  ppid: number;
  /** Process start time as Claude Code records it (field 22 of /proc/<pid>/stat); '' if unknown. */
  start: string;
  /** The state letter (field 3): `Z` is a zombie, `X` dead. Absent where there is no /proc. */
  state?: string;
}

/**
 * The one rule for "is this the process we recorded": it runs (not a zombie) and, where both
 * sides know a start time, the start times agree, so a recycled pid never matches.
 */
export function sameProcess(info: ProcInfo | null, start: string | number | undefined): boolean {
  if (!info || info.state === 'Z' || info.state === 'X') return false;
  if (start === undefined || start === '' || info.start === '') return true;
  return String(start) === info.start;
}

export interface IdentityReaders {
  env: Readonly<Record<string, string | undefined>>;
  selfPid: number;
  cwd: string;
  readSessionRecord(pid: number): SessionRecord | null;
  procInfo(pid: number): ProcInfo | null;
  terminal(): string | null;
  /**
   * The name of the user this process runs as, from the passwd entry of its uid — never the
   * environment: `USER=ceo` must not rename the person (issue 14 §6).
   */
  username(): string;
  /**
   * The process (thread group) a task belongs to: the Tgid of /proc/<pid>/status. Only asked
   * for CLAUDE_PID; absent where there is no /proc.
   */
  threadGroupOf?(pid: number): number | undefined;
  /** The command line of a process (argv), where it can be read. */
  readCommand?(pid: number): string[] | null;
}

/**
 * Agent CLIs other than Claude Code, known by their command line (issue #10 §17): each
 * instance is an agent with its own id and ledger, never the human at the terminal. A
 * harness not listed here declares itself with ATTEND_AGENT=<name> (and, for one ledger
 * per instance, ATTEND_AGENT_ID=<stable id>) in the environment it runs its tools with.
 */
const KNOWN_AGENTS: { name: string; match: RegExp }[] = [
  { name: 'codex', match: /(^|\/)codex(\.js)?$|@openai\/codex\// },
  { name: 'gemini', match: /(^|\/)gemini(\.js)?$|@google\/gemini-cli\// },
  { name: 'aider', match: /(^|\/)aider$|(^|\/)aider\/__main__\.py$/ },
  { name: 'opencode', match: /(^|\/)opencode(\.js)?$|opencode-ai\// },
];

/** Which known agent CLI a command line is, looking past an interpreter (node, python, bun). */
function knownAgentOf(argv: string[]): string | null {
  const words = argv.slice(0, 3).filter((w) => !w.startsWith('-') || w === '-m');
  const candidates = [words[0] ?? ''];
  if (/(^|\/)(node|nodejs|bun|deno|python3?(\.\d+)?)$/.test(candidates[0]!)) {
    const i = words[1] === '-m' ? 2 : 1;
    candidates.push(words[i] ?? '');
  }
  for (const c of candidates) for (const a of KNOWN_AGENTS) if (c && a.match.test(c)) return a.name;
  return null;
}

const AGENT_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

export interface Identity {
  resolved: boolean;
  /** Why resolution went the way it did, for `attend whoami`. */
  reason: string;
  kind: 'agent' | 'human';
  /** Canonical id: the session id for agents, the sanitized username for humans. */
  id: string;
  /** The wire's `from`: `claude:<sid>` or `external:<user>@<terminal>`. */
  from: string;
  origin: string;
  user: string;
  sessionId?: string;
  pid?: number;
  record?: SessionRecord;
  via?: 'env' | 'ancestry' | 'agent-cli' | 'declared';
  /** The env named another session id than the record: the process was /clear-ed since. */
  followedClear?: boolean;
  terminal?: string;
  /**
   * Set when attend cannot tell who is speaking: the process carries a Claude Code session's
   * environment but no live session owns it. Such an identity must never act (the verbs'
   * context refuses it, exit 4): it is not that session, and it must not pass for the person.
   */
  refused?: string;
  /**
   * An agent CLI's own process (via 'agent-cli'): where its lineage is climbed from, so a Codex
   * started from a person's terminal is that person's child (in one group with the sessions
   * the person started) and one started from a session's tool is that session's. Not `pid`,
   * which names a Claude Code process.
   */
  cliPid?: number;
}

export const MAX_HOPS = 15;

/** The origin path is the record's cwd with any `/.claude/worktrees/...` suffix cut. */
export function normalizeOrigin(cwd: string): string {
  const i = cwd.indexOf('/.claude/worktrees/');
  const cut = i >= 0 ? cwd.slice(0, i) : cwd;
  const trimmed = cut.length > 1 ? cut.replace(/\/+$/, '') : cut;
  return trimmed.length > 0 ? trimmed : '/';
}

/** A record matches a live process when the pid agrees and the start time does too. */
export function recordMatches(rec: SessionRecord | null, pid: number, info: ProcInfo | null): rec is SessionRecord {
  return rec !== null && rec.pid === pid && sameProcess(info, rec.procStart);
}

function agentIdentity(r: IdentityReaders, rec: SessionRecord, via: 'env' | 'ancestry', reason: string): Identity {
  const envSid = r.env.CLAUDE_CODE_SESSION_ID;
  const id: Identity = {
    resolved: true,
    reason,
    kind: 'agent',
    id: rec.sessionId,
    from: `claude:${rec.sessionId}`,
    origin: normalizeOrigin(rec.cwd ?? r.cwd),
    user: humanUser(r),
    sessionId: rec.sessionId,
    pid: rec.pid,
    record: rec,
    via,
  };
  if (envSid && envSid !== rec.sessionId) id.followedClear = true;
  return id;
}

function humanUser(r: IdentityReaders): string {
  return sanitizeMemberId(r.username());
}

/** The variables Claude Code gives every process it starts (its tools, hooks, monitors). */
const SESSION_MARKERS = ['CLAUDE_CODE_SESSION_ID', 'CLAUDE_PID', 'CLAUDECODE'] as const;

function humanIdentity(r: IdentityReaders, reason: string): Identity {
  const user = humanUser(r);
  const terminal = r.terminal();
  // `external:<user>[@<terminal>]` (docs/architecture.md, "The wire line"): without a terminal there is nothing to add.
  const from = terminal ? `external:${user}@${terminal}` : `external:${user}`;
  const id: Identity = {
    resolved: false,
    reason,
    kind: 'human',
    id: user,
    from,
    origin: normalizeOrigin(r.cwd),
    user,
  };
  if (terminal) id.terminal = terminal;
  return id;
}

/** An agent that is not Claude Code: its own id (so its own ledger), kind agent. */
function otherAgentIdentity(r: IdentityReaders, id: string, via: 'agent-cli' | 'declared', reason: string, cliPid?: number): Identity {
  const who: Identity = { resolved: false, reason, kind: 'agent', id, from: `agent:${id}`, origin: normalizeOrigin(r.cwd), user: humanUser(r), via };
  if (cliPid !== undefined) who.cliPid = cliPid;
  return who;
}

/**
 * The id of a declared agent (ATTEND_AGENT=<name>, ATTEND_AGENT_ID=<instance>): always
 * `<name>[.<instance>]@<user>`. The `@` puts it in a namespace of its own: no session id
 * (a session record's id has no `@`), no username (sanitized to [A-Za-z0-9_.-]) and no
 * agent CLI's id can ever be one, so a declaration can never name another party (issue 20 §1).
 */
export function declaredAgentId(name: string, instance: string, user: string): string {
  const inst = instance ? sanitizeMemberId(instance).slice(0, 48) : '';
  return `${name}${inst ? `.${inst}` : ''}@${sanitizeMemberId(user).slice(0, 64)}`;
}

/** Is this id a declared agent's (tools/identity/resolve.ts declaredAgentId)? */
export function isDeclaredAgentId(id: string): boolean {
  return /^[a-z0-9][a-z0-9-]{0,31}(\.[A-Za-z0-9_.-]+)?@[A-Za-z0-9_.-]+$/.test(id);
}

/**
 * Who is speaking (issue 20 §1). The process ancestry decides, always: the nearest ancestor
 * that is a live Claude Code session (its record names that very process), else the nearest
 * that is a known agent CLI. The environment is only ever a check on that climb:
 * CLAUDE_PID and CLAUDE_CODE_SESSION_ID are believed only where they agree with it, so a
 * tool process that sets another session's variables is still its own session. With neither
 * in the ancestry, a process that carries a Claude Code session's variables is refused (a
 * detached child of a session is not that session any more, nor the person); a harness that
 * declares itself (ATTEND_AGENT) is a declared agent in a namespace of its own; else the
 * person. What a process that strips the variables and detaches can still claim is in
 * docs/trust.md, "Who is speaking".
 */
export function resolveIdentity(r: IdentityReaders): Identity {
  const notes: string[] = [];
  const claudePid = r.env.CLAUDE_PID ? Number(r.env.CLAUDE_PID) : NaN;
  const claimed = Number.isInteger(claudePid) && claudePid > 0 ? claudePid : undefined;
  // CLAUDE_PID naming a thread of a process in the ancestry (or of this one) agrees with the
  // ancestry too: the thread is that process's. Claude Code names its own pid; a caller that
  // runs attend in its own process, or as its direct child, with a thread standing for the
  // session (the tests' stand-ins) names a task of it. One read of /proc/<pid>/status, only
  // when CLAUDE_PID is set.
  const owner = claimed !== undefined && r.threadGroupOf ? r.threadGroupOf(claimed) : undefined;
  const byThread = (pid: number): Identity | null => {
    if (claimed === undefined || owner !== pid || claimed === pid) return null;
    const rec = r.readSessionRecord(claimed);
    return recordMatches(rec, claimed, r.procInfo(claimed)) ? agentIdentity(r, rec, 'env', `CLAUDE_PID ${claimed} is a live session record on a thread of ${pid === r.selfPid ? 'this process' : `ancestor pid ${pid}`}`) : null;
  };
  const own = byThread(r.selfPid);
  if (own) return own;
  // Climb at most MAX_HOPS parents. pid 1 is checked too: in a container Claude Code can
  // be the init process.
  let info = r.procInfo(r.selfPid);
  let sawClaimed = false;
  for (let hop = 1; hop <= MAX_HOPS && info && info.ppid > 0; hop++) {
    const pid = info.ppid;
    info = r.procInfo(pid);
    if (!info) break;
    if (pid === claimed) sawClaimed = true;
    const rec = r.readSessionRecord(pid);
    if (recordMatches(rec, pid, info)) {
      const who = agentIdentity(r, rec, 'ancestry', `ancestor pid ${pid} (${hop} up) has a live session record`);
      if (claimed !== undefined && claimed !== pid) who.reason += `; CLAUDE_PID ${claimed} is not this session's process, ignored`;
      return who;
    }
    const thread = byThread(pid);
    if (thread) return thread;
    const argv = r.readCommand?.(pid);
    const agent = argv ? knownAgentOf(argv) : null;
    if (agent) {
      // One id per running instance: the pid and its start time, so a recycled pid is another agent.
      const id = `${agent}-${pid.toString(36)}${info.start ? `.${Number(info.start).toString(36)}` : ''}`;
      return otherAgentIdentity(r, id, 'agent-cli', `ancestor pid ${pid} (${hop} up) is the ${agent} agent CLI`, pid);
    }
    if (pid === 1) break;
  }
  notes.push('no Claude Code session in the process ancestry');
  if (claimed !== undefined && !sawClaimed) notes.push(`CLAUDE_PID ${claimed} is not an ancestor of this process, ignored`);
  // Claude Code's variables with no live session in the ancestry: a process a session
  // detached (`setsid -f`, a daemonized child), or one that outlived its session, or one that
  // set another session's variables. It is not that session (the ancestry says so), and it is
  // not the person either (an agent could otherwise speak as the person by detaching first):
  // refused. A process that strips these variables as well cannot be told from a person at a
  // terminal (docs/trust.md, "Who is speaking").
  const envSid = r.env.CLAUDE_CODE_SESSION_ID;
  const marker = SESSION_MARKERS.find((k) => r.env[k]);
  if (marker) {
    const which = envSid ? `Claude Code session ${sanitizeMemberId(envSid).slice(0, 64)}` : 'a Claude Code session';
    const refused = `this process carries the environment of ${which} (${marker}), but that session is not in its process ancestry, so attend cannot tell who is speaking`;
    return { ...humanIdentity(r, [...notes, refused].join('; ')), refused };
  }
  // A harness that declared itself, with no session or agent CLI above it.
  const declared = r.env.ATTEND_AGENT?.trim().toLowerCase();
  if (declared) {
    if (AGENT_NAME.test(declared)) {
      const id = declaredAgentId(declared, r.env.ATTEND_AGENT_ID?.trim() ?? '', r.username());
      return otherAgentIdentity(r, id, 'declared', [...notes, `ATTEND_AGENT=${declared} declares an agent harness`].join('; '));
    }
    notes.push('ATTEND_AGENT is not a name ([a-z0-9-], 1-32 characters); ignored');
  }
  return humanIdentity(r, notes.join('; '));
}

/**
 * The identity of a long-running conduit that outlives the process that started it (the
 * deliverer, which the SessionStart hook starts detached and waits for until it has
 * resolved from its ancestry): the session of the claude process it was started for, as
 * that process's record says now (so a /clear is followed), or refused once that process is
 * gone. The pid comes from the conduit's own first resolution, never from the environment.
 */
export function resolveStartedFor(r: IdentityReaders, claude: { pid: number; start?: string }): Identity {
  const info = r.procInfo(claude.pid);
  const rec = r.readSessionRecord(claude.pid);
  if (sameProcess(info, claude.start) && recordMatches(rec, claude.pid, info)) {
    return agentIdentity(r, rec, 'ancestry', `the session of claude pid ${claude.pid}, which this process resolved from its ancestry when it started`);
  }
  const refused = `the Claude Code process ${claude.pid} this process was started for has ended`;
  return { ...humanIdentity(r, refused), refused };
}
