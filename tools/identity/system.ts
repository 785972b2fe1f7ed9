// The real readers behind the identity resolver: /proc, session records, the terminal.

import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { type IdentityReaders, type ProcInfo, type SessionRecord, sameProcess } from './resolve.js';

/**
 * The descriptors of process `pid` open on `target`, as /proc/<pid>/fd links name it
 * (`socket:[inode]`, `pipe:[inode]`); none when the process cannot be read (another user's,
 * or gone). A descriptor closed while it is read is left out.
 */
export function descriptorsOn(pid: number, target: string): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  return fds.filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === target;
    } catch {
      return false;
    }
  });
}

/** Parse /proc/<pid>/stat: state is field 3, ppid field 4, the start time field 22 (after the `(comm)`). */
export function parseProcStat(text: string): ProcInfo | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  const ppid = Number(fields[1]);
  const start = fields[19];
  if (!Number.isInteger(ppid) || start === undefined) return null;
  return { ppid, start, state: fields[0] ?? '' };
}

export function procInfoFromProc(pid: number): ProcInfo | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * Where there is no /proc (macOS, the BSDs): the parent pid from `ps`. The start time is
 * left unknown (''), since `ps` does not print it in the form Claude Code records, so the
 * pid alone has to match there.
 */
export function procInfoFromPs(pid: number): ProcInfo | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    // Loaded on demand: child_process pulls in node's stream and net modules, which the
    // /proc path (and the `attend send` start-up budget) does without.
    const { execFileSync } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
    const out = execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 });
    const ppid = Number(out.trim());
    return Number.isInteger(ppid) ? { ppid, start: '' } : null;
  } catch {
    return null;
  }
}

let hasProc: boolean | undefined;

/** The process reader for this system: /proc where it exists, else `ps`. */
export function procInfo(pid: number): ProcInfo | null {
  hasProc ??= existsSync('/proc/self/stat');
  return hasProc ? procInfoFromProc(pid) : procInfoFromPs(pid);
}

/**
 * Is the process (pid, start time) alive? The one liveness check (issue #9 §3) behind the
 * locks, the sensor claim, the registry, the roster and the sensor's watch on its Claude
 * process. `read` is injected where a test needs another answer. Where there is no /proc
 * and `ps` says nothing, signal 0 decides, and EPERM means alive (another user's process).
 */
export function processAlive(pid: number, start?: string | number, read: (pid: number) => ProcInfo | null = procInfo): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const info = read(pid);
  if (info === null && read === procInfo && !(hasProc ??= existsSync('/proc/self/stat'))) return pidRuns(pid);
  return sameProcess(info, start);
}

/**
 * Does a process of this pid run (signal 0; EPERM means another user's, alive)? One system
 * call and no start time, for a frequent look between full checks (processAlive), such as
 * the web server's every 5 s over a roster it read with processAlive.
 */
export function pidRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Parse a session record loosely: unknown fields are kept out, wrong types make it null. */
export function parseSessionRecord(text: string): SessionRecord | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const o = raw as Record<string, unknown>;
  if (typeof o.pid !== 'number' || typeof o.sessionId !== 'string' || o.sessionId.length === 0) return null;
  if (!/^[A-Za-z0-9_.:-]+$/.test(o.sessionId)) return null;
  const rec: SessionRecord = { pid: o.pid, sessionId: o.sessionId };
  if (typeof o.cwd === 'string') rec.cwd = o.cwd;
  if (typeof o.procStart === 'string' || typeof o.procStart === 'number') rec.procStart = String(o.procStart);
  if (typeof o.name === 'string' && o.name.length > 0) rec.name = o.name;
  if (typeof o.nameSource === 'string') rec.nameSource = o.nameSource;
  if (typeof o.status === 'string') rec.status = o.status;
  if (typeof o.kind === 'string') rec.kind = o.kind;
  if (typeof o.updatedAt === 'number') rec.updatedAt = o.updatedAt;
  if (typeof o.startedAt === 'number') rec.startedAt = o.startedAt;
  if (typeof o.version === 'string' && /^\d+\.\d+\.\d+/.test(o.version)) rec.version = o.version;
  return rec;
}

export function readSessionRecordFile(sessionsDir: string, pid: number): SessionRecord | null {
  try {
    return parseSessionRecord(readFileSync(join(sessionsDir, `${pid}.json`), 'utf8'));
  } catch {
    return null;
  }
}

/** The thread group (process) task `pid` belongs to, from /proc/<pid>/status; undefined where unreadable. */
export function threadGroupOf(pid: number): number | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const m = /^Tgid:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The controlling terminal of this process, as `pts-3`, from its standard streams. */
function detectTerminal(): string | null {
  for (const fd of [0, 1, 2]) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      const m = /^\/dev\/(pts\/\d+|tty\w*)$/.exec(target);
      if (m?.[1]) return m[1].replace(/\//g, '-');
    } catch {
      // not on Linux, or the stream is closed
    }
  }
  return null;
}

export function systemReaders(opts: {
  env: Readonly<Record<string, string | undefined>>;
  sessionsDir: string;
  cwd: string;
  pid: number;
}): IdentityReaders {
  return {
    env: opts.env,
    selfPid: opts.pid,
    cwd: opts.cwd,
    readSessionRecord: (pid) => readSessionRecordFile(opts.sessionsDir, pid),
    threadGroupOf,
    procInfo,
    terminal: detectTerminal,
    readCommand: (pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((w) => w.length > 0);
        return argv.length > 0 ? argv : null;
      } catch {
        return null;
      }
    },
    username: userName,
  };
}

/**
 * The name of the user this process runs as: the passwd entry of its uid (what `id -un`
 * prints), never $USER or $LOGNAME, which any process can set (issue 14 §6). A uid without
 * an entry (a container run with an arbitrary uid) is named by its number.
 */
export function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid${process.getuid?.() ?? ''}`;
  }
}
