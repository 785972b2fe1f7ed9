// Cross-process locks: `withLock` for a read-modify-write of a small state file (membership,
// ledgers, the registry), and `tryAcquire`/`release` for a lock held for a process's
// lifetime (the one-sensor-per-session claim, tools/bus/delivery/sensor-claim.ts). One mechanism:
// a file at the lock's name holding the owner's pid, start time and when it was taken, made
// only if the name is free (O_EXCL, or link(2), which fails the same way).
//
// withLock takes its lock by link: each process writes its owner line once per directory,
// in `.owner-<pid>-<start>`, and links that file to the lock's name; release unlinks the
// name. So a lock taken and released makes no file and frees none. Making and freeing a lock
// file on every take (a sensor takes its ledger's lock once per message) slowed ext4's inode
// allocator, which passes over every inode freed in the last seconds: with 20 sessions it
// was a sixth of the sensors' CPU (perf), and grew with the sessions (issue #12 §3). The owner files
// go when the process exits; `attend cleanup` removes those of processes that died.
//
// Takeover (issue #9 §5): a lock is stale only when its owner process is gone (pid + start
// time, the one liveness check) — never because it is old, so a live holder keeps it
// however long it takes. A file with no owner written yet is a lock being taken, and is
// stale only once it has been so for STALE_EMPTY_MS (its taker died between create and
// write). Breaking a stale lock happens under a second O_EXCL file, the breaker, and only
// when the lock still holds the very text judged stale: two waiters that both judged it
// stale cannot both break it, and neither can break the lock a third took in between.

import { closeSync, fstatSync, linkSync, lstatSync, openSync, readFileSync, statSync, unlinkSync, writeSync, constants as fsc } from 'node:fs';
import { dirname, join } from 'node:path';
import { procInfoFromProc, processAlive } from '../../identity/system.js';
import { writeAll, writeError } from './atomic.js';
import { busError } from '../../wire/errors.js';
import { FILE_MODE, ensureDir } from './root.js';

/** A lock file with no owner line for this long was abandoned by a taker that died. */
const STALE_EMPTY_MS = 10_000;
const WAIT_MS = 15_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

export interface LockOwner {
  pid: number;
  start: string;
  /** When it was taken (ms), 0 when not written. */
  at: number;
}

// `pid start at`; a sensor claim written before 0.2 has no `at`.
const OWNER_LINE = /^(\d+) (\S*)(?: (\d+))?\n?$/;

function parseOwner(text: string): LockOwner | null {
  const m = OWNER_LINE.exec(text);
  if (!m) return null;
  const pid = Number(m[1]);
  return pid > 0 ? { pid, start: m[2] ?? '', at: Number(m[3] ?? 0) } : null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export function readOwner(path: string): LockOwner | null {
  const t = readText(path);
  return t === null ? null : parseOwner(t);
}

let ownStart: string | undefined;

/** The start time of this process, as the lock records it (read once: it never changes). */
export function selfStart(): string {
  return (ownStart ??= procInfoFromProc(process.pid)?.start ?? '');
}

function isStale(path: string, text: string, now: number, alive: (pid: number, start: string) => boolean): boolean {
  const owner = parseOwner(text);
  if (owner) return !alive(owner.pid, owner.start);
  try {
    return now - statSync(path).mtimeMs > STALE_EMPTY_MS;
  } catch {
    return false; // gone: the next attempt takes it
  }
}

/** Remove `path` only if it still holds `staleText`, under the breaker. */
function breakStale(path: string, staleText: string, alive: (pid: number, start: string) => boolean): void {
  const breaker = `${path}.break`;
  let fd: number;
  try {
    fd = openSync(breaker, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another waiter is breaking it; a breaker whose owner died is cleared (it is held
    // for microseconds, so only a crash right there leaves one).
    const t = readText(breaker);
    const o = t === null ? null : parseOwner(t);
    if (o && !alive(o.pid, o.start)) {
      try {
        unlinkSync(breaker);
      } catch {
        // cleared by another waiter
      }
    }
    return;
  }
  try {
    writeSync(fd, `${process.pid} ${selfStart()} ${Date.now()}`);
    if (readText(path) === staleText) unlinkSync(path);
  } catch {
    // vanished meanwhile: nothing to break
  } finally {
    closeSync(fd);
    try {
      unlinkSync(breaker);
    } catch {
      // nothing to do
    }
  }
}

/** An owner file: `.owner-<pid>-<start>`. */
export const OWNER_FILE = /^\.owner-(\d+)-(\S*)$/;

interface OwnerFile {
  path: string;
  ino: number;
}

/** This process's owner file per directory; null where links do not work (take by O_EXCL there). */
const ownerFiles = new Map<string, OwnerFile | null>();
let exitHooked = false;

function removeOwnerFiles(): void {
  for (const o of ownerFiles.values()) {
    if (o === null) continue;
    try {
      unlinkSync(o.path);
    } catch {
      // gone already
    }
  }
  ownerFiles.clear();
}

/** This process's owner file in `dir`, written on first need; null when it cannot be. */
function ownerFileIn(dir: string, now: number): OwnerFile | null {
  const known = ownerFiles.get(dir);
  if (known !== undefined) return known;
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', removeOwnerFiles);
  }
  const path = join(dir, `.owner-${process.pid}-${selfStart()}`);
  let o: OwnerFile;
  let fd: number;
  try {
    fd = openSync(path, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_NOFOLLOW, FILE_MODE);
  } catch {
    // No owner file (a directory that is not there yet is made by the caller's retry): O_EXCL.
    return null;
  }
  try {
    writeAll(fd, Buffer.from(`${process.pid} ${selfStart()} ${now}`));
    o = { path, ino: fstatSync(fd).ino };
  } catch {
    // A full disk: no half-written owner file is left behind, and O_EXCL reports the failure.
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // gone
    }
    return null;
  }
  closeSync(fd);
  ownerFiles.set(dir, o);
  return o;
}

/**
 * Remove this process's owner file in `dir` (before removing the directory itself): a later
 * take there writes it again. Forgets an owner file that went, too.
 */
export function dropOwnerFile(dir: string): void {
  const o = ownerFiles.get(dir);
  if (o) {
    try {
      unlinkSync(o.path);
    } catch {
      // gone
    }
  }
  ownerFiles.delete(dir);
}

interface AcquireOptions {
  /** The owner recorded in the file; this process by default. */
  pid?: number;
  start?: string;
  /** A lock this owner already holds counts as acquired (a lifetime claim taken again). */
  reentrant?: boolean;
  /** The liveness check, injected by tests; the one in identity/system.ts by default. */
  alive?: (pid: number, start: string) => boolean;
  now?: () => number;
  /** Take it by linking this process's owner file (withLock); only for this process's own locks. */
  link?: boolean;
}

type Acquired = { ok: true } | { ok: false; owner: LockOwner | null };

/** One non-blocking attempt: take the lock, or report its live owner. A stale lock is broken. */
export function tryAcquire(path: string, opts: AcquireOptions = {}): Acquired {
  const pid = opts.pid ?? process.pid;
  const start = opts.start ?? (pid === process.pid ? selfStart() : (procInfoFromProc(pid)?.start ?? ''));
  const alive = opts.alive ?? ((p: number, s: string) => processAlive(p, s));
  const now = opts.now ?? Date.now;
  let madeDir = false;
  let relinked = false;
  const dir = dirname(path);
  for (let attempt = 0; attempt < 3; attempt++) {
    const mine = opts.link === true && pid === process.pid ? ownerFileIn(dir, now()) : null;
    let fd: number | undefined;
    if (mine !== null) {
      try {
        linkSync(mine.path, path);
        return { ok: true };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') {
          // ENOENT: the owner file went (cleanup) and is written again. Anything else is a
          // filesystem without hard links: O_EXCL in this directory from now on.
          dropOwnerFile(dir);
          if (code !== 'ENOENT') ownerFiles.set(dir, null);
          if (!relinked) {
            relinked = true;
            attempt--;
          }
          continue;
        }
      }
    } else try {
      fd = openSync(path, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, FILE_MODE);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // The directory is made on first need, not checked on every take (a sensor takes its
      // ledger's lock once per message).
      if (code === 'ENOENT' && !madeDir) {
        madeDir = true;
        ensureDir(dir);
        attempt--;
        continue;
      }
      if (code !== 'EEXIST') throw writeError(path, err);
    }
    if (fd !== undefined) {
      try {
        // Every byte or a failure (issue #10 item 1): a half-written owner is a lock nobody holds.
        writeAll(fd, Buffer.from(`${pid} ${start} ${now()}`));
      } catch (err) {
        closeSync(fd);
        try {
          unlinkSync(path);
        } catch {
          // nothing to undo
        }
        throw writeError(path, err);
      }
      closeSync(fd);
      return { ok: true };
    }
    const text = readText(path);
    if (text === null) continue; // released meanwhile: try again
    const owner = parseOwner(text);
    if (opts.reentrant && owner && owner.pid === pid && (owner.start === start || owner.start === '' || start === '')) return { ok: true };
    if (!isStale(path, text, now(), alive)) return { ok: false, owner };
    breakStale(path, text, alive);
  }
  return { ok: false, owner: readOwner(path) };
}

/** Release a lock this owner holds; a lock someone else holds is left alone. */
export function release(path: string, pid = process.pid): void {
  const o = pid === process.pid ? ownerFiles.get(dirname(path)) : undefined;
  if (o) {
    // Taken by link: the name is this process's owner file. One stat, no read.
    let ino: number | undefined;
    try {
      ino = lstatSync(path, { throwIfNoEntry: false })?.ino;
    } catch {
      return;
    }
    if (ino === undefined) return;
    if (ino === o.ino) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
      return;
    }
  }
  if (readOwner(path)?.pid !== pid) return;
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

export function withLock<T>(lockPath: string, fn: () => T, opts: { waitMs?: number; alive?: (pid: number, start: string) => boolean } = {}): T {
  const deadline = Date.now() + (opts.waitMs ?? WAIT_MS);
  let delay = 1;
  for (;;) {
    const r = tryAcquire(lockPath, { link: true, ...(opts.alive ? { alive: opts.alive } : {}) });
    if (r.ok) break;
    if (Date.now() > deadline) {
      const who = r.owner ? `pid ${r.owner.pid}` : 'a process that has not written its pid';
      throw busError(`timed out waiting for the lock ${lockPath} (held by ${who})`, 'if no attend process is running, remove the file');
    }
    sleepSync(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 25);
  }
  try {
    return fn();
  } finally {
    release(lockPath);
  }
}

/**
 * withLock for a holder that awaits while it holds the lock (the deliverer posts to a socket
 * and waits for its receipt between planning and recording, issue 21 §2): the wait for the
 * lock yields to the event loop instead of sleeping the thread. The caller must not take the
 * same lock again while it holds it (a link lock is not reentrant).
 */
export async function withLockAsync<T>(lockPath: string, fn: () => Promise<T>, opts: { waitMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (opts.waitMs ?? WAIT_MS);
  let delay = 1;
  for (;;) {
    const r = tryAcquire(lockPath, { link: true });
    if (r.ok) break;
    if (Date.now() > deadline) {
      const who = r.owner ? `pid ${r.owner.pid}` : 'a process that has not written its pid';
      throw busError(`timed out waiting for the lock ${lockPath} (held by ${who})`, 'if no attend process is running, remove the file');
    }
    await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay));
    delay = Math.min(delay * 2, 25);
  }
  try {
    return await fn();
  } finally {
    release(lockPath);
  }
}
