// Who am I (spec §4). A pure resolver over injected readers, so every branch is testable
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
}

export interface ProcInfo {
  ppid: number;
  /** Process start time as Claude Code records it (field 22 of /proc/<pid>/stat); '' if unknown. */
  start: string;
  /** The state letter (field 3): `Z` is a zombie, `X` dead. Absent where there is no /proc. */
  state?: string;
}

export interface IdentityReaders {
  env: Readonly<Record<string, string | undefined>>;
  selfPid: number;
  cwd: string;
  readSessionRecord(pid: number): SessionRecord | null;
  procInfo(pid: number): ProcInfo | null;
  terminal(): string | null;
  username(): string;
  /** The live-or-not record naming this session id, if any (a scan of the sessions dir). */
  findSessionById?(sessionId: string): SessionRecord | null;
}

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
  via?: 'env' | 'ancestry';
  /** The env named another session id than the record: the process was /clear-ed since. */
  followedClear?: boolean;
  terminal?: string;
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
function recordMatches(rec: SessionRecord | null, pid: number, info: ProcInfo | null): rec is SessionRecord {
  if (!rec || rec.pid !== pid || !info) return false;
  // Without a start time on either side (no /proc), the pid alone has to do.
  if (rec.procStart === undefined || info.start === '') return true;
  return String(rec.procStart) === info.start;
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
  return sanitizeMemberId(r.env.USER || r.env.LOGNAME || r.username());
}

export function humanIdentity(r: IdentityReaders, reason: string): Identity {
  const user = humanUser(r);
  const terminal = r.terminal();
  // `external:<user>[@<terminal>]` (spec §3): without a terminal there is nothing to add.
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

export function resolveIdentity(r: IdentityReaders): Identity {
  const notes: string[] = [];
  const claudePid = Number(r.env.CLAUDE_PID);
  if (r.env.CLAUDE_PID && Number.isInteger(claudePid) && claudePid > 0) {
    const rec = r.readSessionRecord(claudePid);
    if (recordMatches(rec, claudePid, r.procInfo(claudePid))) {
      return agentIdentity(r, rec, 'env', `CLAUDE_PID ${claudePid} has a live session record`);
    }
    notes.push(
      rec ? `the record for CLAUDE_PID ${claudePid} belongs to another process (pid recycled)` : `no live session record for CLAUDE_PID ${claudePid}`,
    );
  }
  // Climb at most MAX_HOPS parents. pid 1 is checked too: in a container Claude Code can
  // be the init process.
  let info = r.procInfo(r.selfPid);
  for (let hop = 1; hop <= MAX_HOPS && info && info.ppid > 0; hop++) {
    const pid = info.ppid;
    info = r.procInfo(pid);
    if (!info) break;
    const rec = r.readSessionRecord(pid);
    if (recordMatches(rec, pid, info)) {
      return agentIdentity(r, rec, 'ancestry', `ancestor pid ${pid} (${hop} up) has a live session record`);
    }
    if (pid === 1) break;
  }
  notes.push('no Claude Code session in the process ancestry');
  // A process that still carries a live session's environment but lost its ancestry
  // (`setsid -f`, a daemonized child, a reparented shell) is that session, never the human
  // (issue 14 §6): otherwise any agent could speak as a person by detaching first.
  const envSid = r.env.CLAUDE_CODE_SESSION_ID;
  if (envSid && r.findSessionById) {
    const rec = r.findSessionById(envSid);
    if (rec && recordMatches(rec, rec.pid, r.procInfo(rec.pid))) {
      return agentIdentity(r, rec, 'env', `CLAUDE_CODE_SESSION_ID names the live session of pid ${rec.pid} (not an ancestor: detached)`);
    }
  }
  return humanIdentity(r, notes.join('; '));
}
