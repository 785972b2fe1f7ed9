// A cross-process lock for read-modify-write of small state files (membership, ledgers).
// An O_EXCL lock file holds the owner's pid and start time; a lock whose owner is gone, or
// that is older than STALE_MS, is broken. Waits are short sleeps, bounded by a deadline.

import { closeSync, openSync, readFileSync, statSync, unlinkSync, constants as fsc } from 'node:fs';
import { dirname } from 'node:path';
import { procInfoFromProc } from '../identity/system.js';
import { writeAll, writeError } from './atomic.js';
import { busError } from './errors.js';
import { FILE_MODE, ensureDir } from './root.js';

const STALE_MS = 10_000;
const WAIT_MS = 15_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function ownerGone(lockPath: string, now: number): boolean {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch {
    return false; // vanished: the next attempt will take it
  }
  // The owner creates the file (O_EXCL) and writes its pid a moment later: an empty or
  // partial file is a lock being taken, not a stale one, unless it has been so for long.
  if (!/^\d+ \S* \d+$/.test(text)) {
    try {
      return now - statSync(lockPath).mtimeMs > STALE_MS;
    } catch {
      return false;
    }
  }
  const [pidStr, start, tStr] = text.split(' ');
  const pid = Number(pidStr);
  const t = Number(tStr);
  if (Number.isFinite(t) && now - t > STALE_MS) return true;
  if (!Number.isInteger(pid) || pid <= 0) return Number.isFinite(t) ? false : true;
  const info = procInfoFromProc(pid);
  if (!info) return process.platform === 'linux';
  return start !== undefined && start !== '' && info.start !== start;
}

export function withLock<T>(lockPath: string, fn: () => T): T {
  const deadline = Date.now() + WAIT_MS;
  const self = procInfoFromProc(process.pid);
  let delay = 1;
  let fd: number | undefined;
  ensureDir(dirname(lockPath));
  while (fd === undefined) {
    try {
      fd = openSync(lockPath, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError(lockPath, err);
      if (ownerGone(lockPath, Date.now())) {
        try {
          unlinkSync(lockPath);
        } catch {
          // someone else broke it first
        }
        continue;
      }
      if (Date.now() > deadline) throw busError(`timed out waiting for the lock ${lockPath}`, 'if no attend process is running, remove the file');
      sleepSync(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 25);
    }
  }
  try {
    writeAll(fd, Buffer.from(`${process.pid} ${self?.start ?? ''} ${Date.now()}`));
  } catch (err) {
    // A full disk: an empty lock left behind would stall every other writer for STALE_MS.
    closeSync(fd);
    try {
      unlinkSync(lockPath);
    } catch {
      // gone already
    }
    throw writeError(lockPath, err);
  }
  try {
    return fn();
  } finally {
    closeSync(fd);
    try {
      unlinkSync(lockPath);
    } catch {
      // broken by someone who judged us stale; nothing to do
    }
  }
}
