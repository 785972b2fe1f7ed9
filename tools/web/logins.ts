// A fresh login URL for a running `attend web` (issue 24): `attend web --login` asks no
// question of the server over the network. The server records where it listens in
// <private>/web/server.json; `--login` (run by the person, as the identity check decides)
// writes a one-time token's hash with its expiry to <private>/web/logins/, and the server
// takes it at /login by removing the file: the unlink that succeeds is the one use. The token
// itself is never on disk, only its SHA-256.
//
// <private> is the person's directory of this bus in the key directory
// (tools/bus/trust/private.ts), never the bus root: every session can write the root and its
// state/ (a sandboxed one too), so a hash planted there would be a browser session writing as
// the person, and a planted server record would send the person's next login URL to another
// origin. Nothing here reads the bus root.

import { createHash } from 'node:crypto';
import { readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../bus/store/index.js';
import { openPrivateDir, privatePath } from '../bus/trust/index.js';
import { processAlive, procInfo } from '../identity/system.js';

export interface ServerRecord {
  pid: number;
  /** The process's start time, so a recycled pid is not taken for the server. */
  start: string;
  origin: string;
}

const recordFile = (root: string) => privatePath(root, 'web', 'server.json');
const loginsDir = (root: string) => privatePath(root, 'web', 'logins');
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export function writeServerRecord(root: string, pid: number, origin: string): void {
  openPrivateDir(root, 'web');
  const rec: ServerRecord = { pid, start: String(procInfo(pid)?.start ?? ''), origin };
  writeFileAtomic(recordFile(root), `${JSON.stringify(rec)}\n`, { sync: false });
}

/** Remove the record if it is still this server's (a later `attend web` on the bus replaced it). */
export function removeServerRecord(root: string, pid: number): void {
  const rec = readRecord(root);
  if (rec?.pid === pid) rmSync(recordFile(root), { force: true });
}

function readRecord(root: string): ServerRecord | null {
  const file = recordFile(root); // a key directory others could write is refused, not read
  try {
    const o = JSON.parse(readFileSync(file, 'utf8')) as Partial<ServerRecord>;
    if (typeof o.pid !== 'number' || typeof o.origin !== 'string' || typeof o.start !== 'string') return null;
    return { pid: o.pid, start: o.start, origin: o.origin };
  } catch {
    return null;
  }
}

/** The running server of this bus, or null (none recorded, or its process is gone). */
export function runningServer(root: string): ServerRecord | null {
  const rec = readRecord(root);
  return rec && processAlive(rec.pid, rec.start || undefined) ? rec : null;
}

/** Make `token` a login the server takes once, until `expires` (wall-clock ms). */
export function issueLogin(root: string, token: string, expires: number): void {
  writeFileAtomic(join(openPrivateDir(root, 'web', 'logins'), hashOf(token)), `${expires}\n`, { sync: false });
}

/** Take `token` if it was issued and has not expired: true once, false ever after. */
export function takeLogin(root: string, token: string, now: number): boolean {
  if (!/^[\w-]{20,100}$/.test(token)) return false;
  let expires: number;
  try {
    const file = join(loginsDir(root), hashOf(token));
    expires = Number(readFileSync(file, 'utf8').trim());
    unlinkSync(file);
  } catch {
    return false; // never issued, or taken already
  }
  return Number.isFinite(expires) && expires >= now;
}
