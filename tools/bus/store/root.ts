// The bus root: created 0700, refused when another user owns it or group/world can write it
// (docs/architecture.md, "The bus on disk"). Files are written 0600.

import { lstatSync, mkdirSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { busError } from '../../wire/errors.js';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Make sure `root` exists and is safe to use; throws AttendError (exit 3) when it is not. */
export function ensureRoot(root: string, uid: number | undefined = process.getuid?.()): void {
  checkRootPath(root);
  try {
    mkdirSync(root, { recursive: true, mode: DIR_MODE });
  } catch (err) {
    throw busError(`cannot create the bus root ${root}: ${(err as Error).message}`);
  }
  checkRoot(root, uid);
}

/** A relative root names a different bus in every directory: refused before anything is read. */
export function checkRootPath(root: string): void {
  if (!isAbsolute(root)) {
    throw busError(`ATTEND_HOME must be an absolute path, not '${root}'`, 'a relative one names a different bus in every directory; e.g. ATTEND_HOME="$HOME/.cache/attend"');
  }
}

export function checkRoot(root: string, uid: number | undefined = process.getuid?.()): void {
  checkRootPath(root);
  let st;
  try {
    st = lstatSync(root);
  } catch (err) {
    throw busError(`cannot read the bus root ${root}: ${(err as Error).message}`);
  }
  // A symbolic link is refused too: whoever can change the link can move the bus.
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw busError(`the bus root ${root} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}`, 'set ATTEND_HOME to a directory you own');
  }
  if (uid !== undefined && st.uid !== uid) {
    throw busError(
      `the bus root ${root} is owned by uid ${st.uid}, not you (uid ${uid})`,
      'set ATTEND_HOME to a directory you own',
    );
  }
  if ((st.mode & 0o022) !== 0) {
    throw busError(
      `the bus root ${root} is writable by group or others (mode ${(st.mode & 0o777).toString(8)})`,
      `run: chmod 700 ${root}`,
    );
  }
}

/**
 * mkdir -p with 0700 for every directory attend creates below the root. Returns the first
 * directory it made (undefined when `dir` was there): a writer that must survive a power cut
 * syncs its parent too (tools/bus/store/atomic.ts madeDirs).
 */
export function ensureDir(dir: string): string | undefined {
  return mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}
