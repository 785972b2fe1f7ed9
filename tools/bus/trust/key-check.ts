// What the last load of a node's key found true, so the next `attend send` need not find it
// again (issue 20, Performance: a signed send within 1.15× of an unsigned one, in a process
// per send where every first call of a function is cold):
//
//   <keysDir>/<node>.checked   attend-key-check v1
//                              file <stamp of the key file when its x was found to be d's public half>
//                              x <that public half, as the key file's JWK has it>
//                              key <its key id>
//                              record <stamp of the node's record when it listed that key>
//                              list <stamp of the bus's list when it carried that key>
//
// A stamp is a stat: device, inode, size, mtime, ctime, mode and owner. attend replaces a
// key file by renaming a new one over it (a new inode), a record or a list only grows, and
// ctime cannot be set back, so a stamp that differs, or a public half that differs, sends the
// load back to the file itself (keys.ts), which is read and checked as without this file, and
// the answer written here again. What it saves is deriving the public half from the private
// one and the key id from that, reading the record and reading the bus's list; the key and
// trust directories, and the key file's owner and mode, are checked on every load (issue 20).
// (A key file rewritten in place, to the same size, with the same x, within the clock tick
// the last load stamped it in, would pass unchecked: only its owner can write it, and what
// it signed would fail to verify, never pass as anyone's.)
//
// It lives in the key directory, which every load checks first (a directory of the user's,
// mode 0700, not a symbolic link): only the user (or root) can have put it there, and whoever
// could change it could as well change the key. It holds nothing secret, and nothing a reader
// trusts: a wrong answer in it could only make this node's own signatures fail to verify
// (a key id that is not its key's, a key its record does not list), never make a reader take
// a message as anyone's. So it is read in one call, not followed if it is a symbolic link,
// and ignored (then replaced) when it is not in this form.

import { type Stats, lstatSync, readFileSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';

export interface KeyCheck {
  /** stampOf the key file when `x` was found to belong to its private half. */
  file: string;
  /** The key file's public half (JWK `x`). */
  x: string;
  /** The key id of `x`. */
  keyId: string;
  /** pathStamp of the node's record when it listed keyId; '' when not seen to. Only an isStamp counts. */
  record: string;
  /** pathStamp of the bus's list when it carried keyId; '' when not seen to. Only an isStamp counts. */
  list: string;
}

const HEAD = 'attend-key-check v1';
const READ_FLAGS = fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK;
const FIELDS = ['file', 'x', 'key', 'record', 'list'] as const;

/** `<keysDir>/<node>.checked`, for a node id keys.ts has already taken as a file name. */
export function keyCheckPath(keysDir: string, node: string): string {
  return join(keysDir, `${node}.checked`);
}

/** A stat as one string. */
export function stampOf(st: Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}:${st.uid}`;
}

/** A file's lstat as one string; '-' when there is none, '?' when it cannot be stat'ed (never a match). */
export function pathStamp(path: string): string {
  try {
    const st = lstatSync(path, { throwIfNoEntry: false });
    return st === undefined ? '-' : stampOf(st);
  } catch {
    return '?';
  }
}

/** A stamp of a file that was there ('-' and '?' are not). */
export function isStamp(stamp: string): boolean {
  return stamp.length > 1;
}

/** The check file's answer, or null when there is none usable. */
export function readKeyCheck(path: string): KeyCheck | null {
  let text: string;
  try {
    // O_NONBLOCK: a FIFO put here must not hang the send. Node takes open(2) flags as a
    // number here (its types say string only).
    text = readFileSync(path, { encoding: 'utf8', flag: READ_FLAGS as unknown as string });
  } catch {
    return null;
  }
  const lines = text.split('\n');
  if (lines[0] !== HEAD || lines.length !== FIELDS.length + 2 || lines[FIELDS.length + 1] !== '') return null;
  const values: string[] = [];
  for (let i = 0; i < FIELDS.length; i++) {
    const line = lines[i + 1] as string;
    const name = `${FIELDS[i]} `;
    if (!line.startsWith(name)) return null;
    values.push(line.slice(name.length));
  }
  const [file, x, keyId, record, list] = values as [string, string, string, string, string];
  return x.length > 0 && keyId.length > 0 ? { file, x, keyId, record, list } : null;
}

/**
 * Write the check file; a failure is not the send's (the next load checks the files again).
 * Not synced: a power cut that tears it leaves a file this reader ignores.
 */
export function writeKeyCheck(path: string, c: KeyCheck): void {
  try {
    writeFileAtomic(path, `${HEAD}\nfile ${c.file}\nx ${c.x}\nkey ${c.keyId}\nrecord ${c.record}\nlist ${c.list}\n`, { sync: false });
  } catch {
    // not the send's failure
  }
}
