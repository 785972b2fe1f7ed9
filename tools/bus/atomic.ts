// Atomic writes: a temporary file in the destination directory, then rename (docs/architecture.md, "The bus on disk").
// Readers only read `*.signal`, so a half-written temporary is never seen.

import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FILE_MODE, ensureDir } from './root.js';

let tmpCounter = 0;

export function writeFileAtomic(path: string, data: string | Uint8Array, opts: { fsync?: boolean } = {}): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${++tmpCounter}.tmp`);
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    ensureDir(dir);
    fd = openSync(tmp, 'wx', FILE_MODE);
  }
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    if (opts.fsync) fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    safeUnlink(tmp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    safeUnlink(tmp);
    throw err;
  }
}

function safeUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
