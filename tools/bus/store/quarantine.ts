// The quarantine (issue #10 item 2): a file under signals/ that no reader can parse (binary,
// empty, invalid UTF-8, not a line, a symlink, too large) would be skipped, and warned about,
// by every reader on every run forever. The first reader that meets it once it has settled
// moves it here with the reason, and reports that once. Nothing is deleted:
//
//   <root>/quarantine/<scope dir>/<name>            the file as it was
//   <root>/quarantine/<scope dir>/<name>.reason     why, where from, when (JSON)
//
// "Settled" guards a file another tool is writing in place (`echo ... > x.signal` is empty
// for a moment): only a file untouched for QUARANTINE_AFTER_MS is moved; until then it is
// skipped and reported as before.

import { existsSync, lstatSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Scope } from '../../wire/envelope.js';
import { writeFileAtomic } from './atomic.js';
import { quarantineDir, scopeDirName } from './layout.js';
import { ensureDir } from './root.js';

export const QUARANTINE_AFTER_MS = 5_000;
const REASON_EXT = '.reason';

export { quarantineDir };

type QuarantineOutcome = { state: 'moved'; to: string } | { state: 'kept' } | { state: 'gone' };

/** Move `path` (a bad file in `scope`) to the quarantine if it has settled. Never throws. */
export function quarantineSettled(root: string, scope: Scope, path: string, reason: string, now = Date.now()): QuarantineOutcome {
  let mtimeMs: number;
  try {
    mtimeMs = lstatSync(path).mtimeMs;
  } catch {
    return { state: 'gone' };
  }
  if (now - mtimeMs < QUARANTINE_AFTER_MS) return { state: 'kept' };
  const dir = join(quarantineDir(root), scopeDirName(scope));
  const name = basename(path);
  try {
    ensureDir(dir);
    let to = join(dir, name);
    // The same name can go bad twice (written again after the first was moved).
    for (let n = 1; existsSync(to) || existsSync(`${to}${REASON_EXT}`); n++) to = join(dir, `${name}.${n}`);
    renameSync(path, to);
    try {
      writeFileAtomic(`${to}${REASON_EXT}`, `${JSON.stringify({ reason, from: path, at: new Date(now).toISOString() })}\n`);
    } catch {
      // The file is safe; only the note is missing (a full disk). Counting still works.
    }
    return { state: 'moved', to };
  } catch (err) {
    // Another reader moved it first: it has been reported there.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(path)) return { state: 'gone' };
    return { state: 'kept' };
  }
}

interface Quarantined {
  /** Where the file is now. */
  path: string;
  /** Its scope directory under signals/ (`_broadcast`, `@ops`, a tray key). */
  scopeDir: string;
  reason: string | null;
}

/** Everything in the quarantine, for `attend status` and the owner. */
export function listQuarantined(root: string): Quarantined[] {
  const base = quarantineDir(root);
  const out: Quarantined[] = [];
  let dirs: string[];
  try {
    dirs = readdirSync(base).sort();
  } catch {
    return out;
  }
  for (const d of dirs) {
    let names: string[];
    try {
      names = readdirSync(join(base, d)).sort();
    } catch {
      continue;
    }
    const have = new Set(names);
    for (const n of names) {
      if (n.endsWith(REASON_EXT) || n.startsWith('.')) continue;
      out.push({ path: join(base, d, n), scopeDir: d, reason: have.has(`${n}${REASON_EXT}`) ? readReason(join(base, d, `${n}${REASON_EXT}`)) : null });
    }
  }
  return out;
}

/** How many files are in the quarantine. */
export function countQuarantined(root: string): number {
  return listQuarantined(root).length;
}

function readReason(path: string): string | null {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as { reason?: unknown };
    return typeof v.reason === 'string' ? v.reason : null;
  } catch {
    return null;
  }
}
