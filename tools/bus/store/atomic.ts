// Atomic writes: a temporary file in the destination directory, then rename (docs/architecture.md, "The bus on disk").
// Readers only read `*.signal`, so a half-written temporary is never seen.
//
// A full disk must never turn into a short file renamed into place and reported written
// (issue #10 item 1): every byte is checked, the data is synced before the rename, and on
// any failure the temporary is removed, nothing is renamed, the previous file stays as it
// was, and the caller gets a bus error (exit 3).

import { closeSync, fsync, fsyncSync, open, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, readSync, futimesSync, constants as fsc } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { busError, type AttendError } from '../../wire/errors.js';
import { FILE_MODE, ensureDir } from './root.js';

let tmpCounter = 0;

/**
 * Write all of `buf` to `fd` from its current position. write(2) may write less than asked
 * (a filesystem that fills up mid-write returns the bytes it took); the rest is retried, and
 * a write that takes nothing is a failure, never a silent truncation.
 */
export function writeAll(fd: number, buf: Uint8Array): void {
  let off = 0;
  while (off < buf.length) {
    const n = writeSync(fd, buf, off, buf.length - off);
    if (n <= 0) throw Object.assign(new Error(`short write (${off} of ${buf.length} bytes)`), { code: 'ESHORT' });
    off += n;
  }
}

/**
 * Read up to `size` bytes of an open file from `at`: the whole of what is there, in as many
 * read(2)s as it takes. Every bounded reader (signals, keys, the index hint, the relay) uses
 * this one loop; the caller has already checked the size against its own limit.
 */
export function readAll(fd: number, size: number, at = 0): Buffer {
  const buf = Buffer.alloc(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, off, size - off, at + off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/**
 * The text of a small state file, or null when there is none. A long-running reader (the
 * sensor) looks for several files that usually do not exist (the policy, the channel store,
 * what it is owed) on every wake: a failed read builds an Error with its stack (~25 µs),
 * a stat that finds nothing does not. Other failures throw as readFileSync does.
 */
export function readTextIfAny(path: string): string | null {
  if (statSync(path, { throwIfNoEntry: false }) === undefined) return null;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // removed in between
    throw err;
  }
}

/**
 * A file's identity for a cache that re-reads it only when it changed: inode, size and
 * mtime; '-' when there is none. Never throws (an unreadable file reads as none).
 */
export function fileStamp(path: string): string {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st === undefined ? '-' : statStamp(st);
  } catch {
    return '-';
  }
}

/** fileStamp of a stat already in hand (an fstat after a write). */
export function statStamp(st: { ino: number; size: number; mtimeMs: number }): string {
  return `${st.mtimeMs}:${st.size}:${st.ino}`;
}

/** The failure as one bus error naming the file: `cannot write <path>: no space left (ENOSPC)`. */
export function writeError(path: string, err: unknown): AttendError {
  const e = err as NodeJS.ErrnoException;
  const code = e?.code;
  const why = code === 'ENOSPC' ? 'no space left on the device' : code === 'EDQUOT' ? 'disk quota exceeded' : (e?.message ?? String(err)).replace(/^[A-Z]+: /, '');
  return busError(`cannot write ${path}: ${why}${code ? ` (${code})` : ''}; nothing was changed`, code === 'ENOSPC' || code === 'EDQUOT' ? 'free some space and try again' : undefined);
}

/**
 * Make the entries of directory `dir` durable: what was renamed into it (or removed from it)
 * survives a power cut once this returns. open(O_RDONLY | O_DIRECTORY), fsync, close; a
 * filesystem that cannot sync a directory (EINVAL, ENOTSUP: some FUSE and network
 * filesystems, as PostgreSQL's fsync_fname also allows) has nothing more to give and is let
 * be. Any other failure (EIO) is a bus error naming the directory: the caller must not report
 * its write done.
 */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
    fsyncSync(fd);
  } catch (err) {
    if (!dirSyncUnsupported(err)) throw writeError(dir, err);
  } finally {
    if (fd !== undefined) safeClose(fd);
  }
}

/** syncDir of each directory once, in the order given. */
export function syncDirs(dirs: Iterable<string>): void {
  for (const dir of new Set(dirs)) syncDir(dir);
}

function dirSyncUnsupported(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'EINVAL' || code === 'ENOTSUP' || code === 'EOPNOTSUPP';
}

/**
 * The directories whose entries changed when `dir` was made by a mkdir -p whose first new
 * directory is `first` (ensureDir's answer): `dir` itself, then each new directory's parent
 * up to the one that already existed. A new directory's name is an entry in its parent, and
 * a message renamed into a directory a power cut takes back is gone with it.
 */
export function madeDirs(dir: string, first: string | undefined): string[] {
  const out = [dir];
  if (first === undefined) return out;
  for (let d = dir; d.length >= first.length; ) {
    const up = dirname(d);
    if (up === d) break;
    out.push(up);
    d = up;
  }
  return out;
}

/** Is `dir` the directory `top` or inside it? */
function isWithin(dir: string, top: string): boolean {
  return dir === top || dir.startsWith(top.endsWith('/') ? top : `${top}/`);
}

/**
 * Replace `path` with `data` atomically. Throws AttendError (exit 3) when any step fails;
 * `path` then holds exactly what it held before. The data is synced before the rename unless
 * `sync: false`, which only state a crash may roll back takes (the shown mark, heartbeats:
 * each says why at its call); `mtimeMs` sets the file's time (a copy keeps the time of its
 * original).
 *
 * `syncDir`: the rename must survive a power cut too. `true` syncs the directory (and any
 * directory this write had to make) before returning; a set collects them instead, for a
 * writer that renames several files and syncs each directory once after the last (syncDirs).
 * The data is always synced then, whatever `sync` says: a durable name for data that is not
 * would be worse than neither.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, opts: { mtimeMs?: number; sync?: boolean; tmpDir?: string; syncDir?: true | Set<string> } = {}): void {
  // `tmpDir` (same filesystem) keeps the temporary out of a directory others watch: every
  // sensor reading a directory wakes for each entry made in it (issue #12 §3). Renamed out of
  // it, the temporary's old name needs no sync: a power cut that brings it back leaves a
  // leftover temporary, which cleanup removes.
  const dest = dirname(path);
  const opened = openTemp(path, opts.tmpDir ?? dest);
  const { fd, tmp } = opened;
  // The first directory made on the way to `dest`: by openTemp (the temporary's directory,
  // or an ancestor it shares with `dest`: signals/ on a new bus), or by the rename below.
  let made = opened.made !== undefined && (opts.tmpDir === undefined || isWithin(dest, opened.made)) ? opened.made : undefined;
  try {
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    // Sync before the rename: after a crash the name must never point at missing data.
    if (opts.sync !== false || opts.syncDir !== undefined) fsyncSync(fd);
    // A copy of a file from elsewhere (the relay's imports) keeps the time it was made.
    if (opts.mtimeMs !== undefined) futimesSync(fd, new Date(opts.mtimeMs), new Date(opts.mtimeMs));
  } catch (err) {
    safeClose(fd);
    safeUnlink(tmp);
    throw writeError(path, err);
  }
  try {
    // close(2) can report a deferred write error (NFS): that too means "not written".
    closeSync(fd);
    try {
      renameSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || opts.tmpDir === undefined) throw err;
      const first = ensureDir(dest);
      made ??= first;
      renameSync(tmp, path);
    }
  } catch (err) {
    safeUnlink(tmp);
    throw writeError(path, err);
  }
  if (opts.syncDir === true) syncDirs(madeDirs(dest, made));
  else if (opts.syncDir !== undefined) for (const d of madeDirs(dest, made)) opts.syncDir.add(d);
}

export interface AtomicFile {
  path: string;
  data: string | Uint8Array;
  mtimeMs?: number;
}

/** Files written before any is synced, at most this many descriptors open at once. */
const BATCH_FDS = 256;
/**
 * A batch this small (one message and its signature: what a relay imports one at a time)
 * is made and synced on the calling thread: a trip through libuv's thread pool costs more
 * than the wait it would share (issue 25: a tenth of a millisecond each way, on the path of
 * every message from the hub to the model), and there is nothing to overlap.
 */
const ON_THREAD_FILES = 2;

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
}

/**
 * Many files, each as writeFileAtomic writes one, for a writer that has a batch (the relay's
 * imports, issue 13): every temporary is written, then all are synced at once, then all are
 * renamed in the order given (a signature sidecar before its message), then each directory
 * is synced, so the renames too are durable when this resolves (`afterRename` runs just before
 * those syncs: a hint such as an index line, which need not wait for them). The syncs run concurrently
 * (libuv's thread pool), so the filesystem commits them together instead of once per file,
 * and the event loop is not blocked waiting for the disk; only a batch of ON_THREAD_FILES
 * is made and synced on the calling thread (its directory's sync still goes to the pool).
 *
 * On a failure before the renames nothing is renamed and every temporary is removed; a
 * failure part-way through the renames leaves the files renamed so far (each complete and
 * synced) and removes the rest. Either way it rejects with a bus error (exit 3) and the
 * caller must not report the batch written.
 */
export async function writeFilesAtomic(files: AtomicFile[], opts: { afterRename?: () => void } = {}): Promise<void> {
  const made: { tmp: string; path: string }[] = [];
  const dirs = new Set<string>();
  for (let at = 0; at < files.length; at += BATCH_FDS) {
    const open: { fd: number; f: AtomicFile; tmp: string }[] = [];
    const discard = () => {
      for (const o of open) {
        safeClose(o.fd);
        safeUnlink(o.tmp);
      }
      for (const m of made) safeUnlink(m.tmp);
    };
    try {
      // The temporaries are made concurrently (libuv's thread pool): a file's creation waits
      // for the filesystem's journal, and a busy disk makes each one cost a millisecond or
      // more; side by side they share the waits instead of queueing on the event loop.
      const chunk = files.slice(at, at + BATCH_FDS);
      const onThread = files.length <= ON_THREAD_FILES;
      const opened = onThread ? chunk.map((f) => settledNow(() => openTemp(f.path, dirname(f.path)))) : await Promise.allSettled(chunk.map((f) => openTempAsync(f.path, dirname(f.path))));
      opened.forEach((r, j) => {
        if (r.status === 'fulfilled') open.push({ fd: r.value.fd, f: chunk[j]!, tmp: r.value.tmp });
      });
      const refused = opened.find((r) => r.status === 'rejected');
      if (refused) throw (refused as PromiseRejectedResult).reason;
      opened.forEach((r, j) => {
        for (const d of madeDirs(dirname(chunk[j]!.path), (r as PromiseFulfilledResult<{ made?: string | undefined }>).value.made)) dirs.add(d);
      });
      for (const { fd, f } of open) {
        try {
          writeAll(fd, typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data);
          if (f.mtimeMs !== undefined) futimesSync(fd, new Date(f.mtimeMs), new Date(f.mtimeMs));
        } catch (err) {
          throw writeError(f.path, err);
        }
      }
      const synced = onThread ? open.map((o) => settledNow(() => fsyncSync(o.fd))) : await Promise.allSettled(open.map((o) => fsyncAsync(o.fd)));
      const bad = synced.findIndex((r) => r.status === 'rejected');
      if (bad >= 0) throw writeError(open[bad]!.f.path, (synced[bad] as PromiseRejectedResult).reason);
      while (open.length > 0) {
        const o = open[0]!;
        try {
          // close(2) can report a deferred write error (NFS): that too means "not written".
          closeSync(o.fd);
        } catch (err) {
          open.shift();
          safeUnlink(o.tmp);
          throw writeError(o.f.path, err);
        }
        open.shift();
        made.push({ tmp: o.tmp, path: o.f.path });
      }
    } catch (err) {
      discard();
      throw err;
    }
  }
  let i = 0;
  try {
    for (; i < made.length; i++) renameSync(made[i]!.tmp, made[i]!.path);
  } catch (err) {
    const failed = made[i]!.path;
    for (let j = i; j < made.length; j++) safeUnlink(made[j]!.tmp);
    throw writeError(failed, err);
  }
  // Between the renames and the directory syncs (the index lines, as writeSignal appends its
  // line before its sync): readers woken by a rename need not wait for the disk.
  opts.afterRename?.();
  // As syncDir, concurrently (the directories of one batch commit together).
  await Promise.all(
    [...dirs].map(async (dir) => {
      let fd: number | undefined;
      try {
        fd = openSync(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
        await fsyncAsync(fd);
      } catch (err) {
        if (!dirSyncUnsupported(err)) throw writeError(dir, err);
      } finally {
        if (fd !== undefined) safeClose(fd);
      }
    }),
  );
}

/**
 * A new temporary for `path` in `dir` (made when missing: `made` is then the first directory
 * made, as ensureDir says), opened for writing: a name no other writer uses (this process's
 * pid and a counter). Throws a bus error naming `path`.
 */
function openTemp(path: string, dir: string): { fd: number; tmp: string; made?: string | undefined } {
  const tmp = tempFor(path, dir);
  try {
    try {
      return { fd: openSync(tmp, 'wx', FILE_MODE), tmp };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const made = ensureDir(dir);
      return { fd: openSync(tmp, 'wx', FILE_MODE), tmp, made };
    }
  } catch (err) {
    throw writeError(path, err);
  }
}

/** A temporary's name for `path` in `dir` that no other writer uses (this process's pid and a counter). */
function tempFor(path: string, dir: string): string {
  return join(dir, `.${basename(path)}.${process.pid}.${++tmpCounter}.tmp`);
}

/**
 * openTemp through the thread pool (writeFilesAtomic makes a batch's temporaries side by
 * side). A directory that is missing is openTemp's to make: the rare case waits on this thread.
 */
async function openTempAsync(path: string, dir: string): Promise<{ fd: number; tmp: string; made?: string | undefined }> {
  const tmp = tempFor(path, dir);
  try {
    return { fd: await new Promise<number>((resolve, reject) => open(tmp, 'wx', FILE_MODE, (err, fd) => (err ? reject(err) : resolve(fd)))), tmp };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw writeError(path, err);
    return openTemp(path, dir);
  }
}

/** `fn()` now, settled as Promise.allSettled reports each of its promises. */
function settledNow<T>(fn: () => T): PromiseSettledResult<T> {
  try {
    return { status: 'fulfilled', value: fn() };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}

function safeClose(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already reported by the write that failed
  }
}

function safeUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
