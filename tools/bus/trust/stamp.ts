// The stamp of the trust inputs a held verdict depends on (issue 20, must-have 5): the nodes'
// key records (a key appears, rotates or is replaced; a remote host's list grows) and the
// policy file. A verdict kept with a directory's listing cache (tools/bus/store/verdicts.ts)
// is trusted only under the stamp it was found under, so a later reader reuses it without
// deciding again, and any change to what decided it makes every reader decide again.
//
//   <trust dir>/.stamp   a token, replaced by markTrustChanged at every change of a record
//
// The policy file is stamped by its own stat (inode, size, mtime), so an edit by hand counts
// as much as `attend allow`. A stamp that cannot be read is '-', which matches no stamp a
// verdict was kept under once a record existed: unreadable means decide again, never reuse.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { ensureDir } from '../store/root.js';
import { policyFile } from './policy.js';

const STAMP = '.stamp';

function statStamp(path: string): string {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}` : '-';
}

/**
 * Record that a key record in `trustDir` (anchors.ts trustDirOf) changed: called by whoever
 * changed it. Not node:crypto's random bytes: readers that never verify must not load it.
 */
export function markTrustChanged(trustDir: string): void {
  const dir = trustDir;
  try {
    ensureDir(dir);
    const token = `${Date.now().toString(36)}-${process.pid.toString(36)}-${Math.random().toString(36).slice(2)}`;
    writeFileAtomic(join(dir, STAMP), `${token}\n`);
  } catch {
    // A stamp that cannot be written is read as '-': verdicts kept before it stop matching.
    try {
      writeFileAtomic(join(dir, STAMP), '');
    } catch {
      // nothing more to do: the records themselves are what readers verify with
    }
  }
}

/**
 * The trust inputs of the bus at `root` now, as one string: equal means nothing changed.
 * `trustDir` is where its key records are (undefined: this process was never told).
 */
export function trustStamp(root: string, trustDir: string | undefined): string {
  let token = '-';
  if (trustDir !== undefined) {
    try {
      token = readTextIfAny(join(trustDir, STAMP))?.trim() || '-';
    } catch {
      // no record changed since the stamp began (or none was ever made): '-'
    }
  }
  return `${token}|${statStamp(policyFile(root))}`;
}
