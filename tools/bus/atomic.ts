// Atomic writes: a temporary file in the destination directory, then rename (docs/architecture.md, "The bus on disk").
// Readers only read `*.signal`, so a half-written temporary is never seen.
//
// A full disk must never turn into a short file renamed into place and reported written
// (issue #10 item 1): every byte is checked, the data is synced before the rename, and on
// any failure the temporary is removed, nothing is renamed, the previous file stays as it
// was, and the caller gets a bus error (exit 3).

import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync, readSync, futimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { busError, type AttendError } from './errors.js';
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

/** The failure as one bus error naming the file: `cannot write <path>: no space left (ENOSPC)`. */
export function writeError(path: string, err: unknown): AttendError {
  const e = err as NodeJS.ErrnoException;
  const code = e?.code;
  const why = code === 'ENOSPC' ? 'no space left on the device' : code === 'EDQUOT' ? 'disk quota exceeded' : (e?.message ?? String(err)).replace(/^[A-Z]+: /, '');
  return busError(`cannot write ${path}: ${why}${code ? ` (${code})` : ''}; nothing was changed`, code === 'ENOSPC' || code === 'EDQUOT' ? 'free some space and try again' : undefined);
}

/**
 * Replace `path` with `data` atomically. Throws AttendError (exit 3) when any step fails;
 * `path` then holds exactly what it held before. The data is synced before the rename unless
 * `sync: false`, which only state a crash may roll back takes (the delivery ledger, the
 * shown mark, heartbeats: each says why at its call); `mtimeMs` sets the file's time (a
 * copy keeps the time of its original).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, opts: { mtimeMs?: number; sync?: boolean } = {}): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${++tmpCounter}.tmp`);
  let fd: number;
  try {
    try {
      fd = openSync(tmp, 'wx', FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      ensureDir(dir);
      fd = openSync(tmp, 'wx', FILE_MODE);
    }
  } catch (err) {
    throw writeError(path, err);
  }
  try {
    writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    // Sync before the rename: after a crash the name must never point at missing data.
    if (opts.sync !== false) fsyncSync(fd);
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
    renameSync(tmp, path);
  } catch (err) {
    safeUnlink(tmp);
    throw writeError(path, err);
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
