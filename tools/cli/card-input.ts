// The text `attend card verify` checks: a file, or standard input for '-'. A card is small;
// anything past 1 MiB is not one, and is refused before it is read whole.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { notFoundError, usageError } from '../wire/errors.js';
import type { Ctx } from './context.js';
import { messageFrom } from './io.js';

const MAX_CARD = 1024 * 1024;

export async function readCardText(ctx: Ctx, file: string): Promise<string> {
  if (file === '-') return messageFrom(ctx, ['-']);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw notFoundError(`no such card file: ${file}`);
    throw usageError(`cannot read the card file ${file} (${code ?? 'error'})`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_CARD) throw usageError(`${file} is ${size} bytes, more than a card can be (1 MiB)`);
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
