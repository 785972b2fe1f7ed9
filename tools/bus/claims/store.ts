// Claims on the bus (issue 23 §2): one file per claim under state/claims/held/, written
// atomically and removed on release, so two parties claiming at once never share a file and
// need no lock. A claim holds while it has not expired and its holder is live; a claim that
// no longer holds is only skipped by readers, and removed by the next claim or release.

import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { isFresh, readPresence } from '../presence/index.js';
import { processAlive } from '../../identity/system.js';
import { covers } from './glob.js';
import type { FileKey } from './project.js';

export interface ClaimHolder {
  id: string;
  kind: 'agent' | 'human';
  /** Its display name when it claimed (the roster's), for the warning. */
  name: string;
  /** The process that keeps it live: a Claude Code session's claude process, an agent CLI's. */
  pid?: number;
  procStart?: string;
}

export interface Claim {
  v: 1;
  project: string;
  /** The work tree it was claimed from: where to look for the holder. */
  worktree: string;
  /** A path or glob from the work tree root (tools/bus/claims/glob.ts). */
  pattern: string;
  holder: ClaimHolder;
  reason?: string;
  at: number;
  expires: number;
}

function heldDir(root: string): string {
  return join(stateDir(root), 'claims', 'held');
}

function claimFile(root: string, c: Pick<Claim, 'project' | 'pattern' | 'holder'>): string {
  // node:crypto loads only for a command that writes or removes a claim: `attend peers` and
  // the PreToolUse hook read claims and stay without it (test/e2e/trust.test.ts).
  const { createHash } = process.getBuiltinModule('node:crypto') as typeof import('node:crypto');
  const h = createHash('sha256').update(`${c.project}\0${c.pattern}\0${c.holder.id}`).digest('hex').slice(0, 32);
  return join(heldDir(root), `${h}.json`);
}

/** Write (or renew) a claim. */
export function writeClaim(root: string, c: Claim): void {
  mkdirSync(heldDir(root), { recursive: true, mode: 0o700 });
  writeFileAtomic(claimFile(root, c), JSON.stringify(c), { sync: false });
}

export function removeClaim(root: string, c: Pick<Claim, 'project' | 'pattern' | 'holder'>): void {
  try {
    unlinkSync(claimFile(root, c));
  } catch {
    // already gone
  }
}

function parseClaim(text: string): Claim | null {
  try {
    const o = JSON.parse(text) as Partial<Claim>;
    const h = o.holder as Partial<ClaimHolder> | undefined;
    if (o.v !== 1 || typeof o.project !== 'string' || typeof o.pattern !== 'string' || typeof o.worktree !== 'string') return null;
    if (typeof o.at !== 'number' || typeof o.expires !== 'number' || !h || typeof h.id !== 'string' || (h.kind !== 'agent' && h.kind !== 'human')) return null;
    return { ...(o as Claim), holder: { ...h, name: typeof h.name === 'string' ? h.name : h.id } as ClaimHolder };
  } catch {
    return null;
  }
}

/** Every claim file on the bus, held or not (a torn or foreign file is no claim). */
export function readClaims(root: string): Claim[] {
  let names: string[];
  try {
    names = readdirSync(heldDir(root));
  } catch {
    return [];
  }
  const out: Claim[] = [];
  for (const n of names) {
    if (!n.endsWith('.json') || n.startsWith('.')) continue;
    let text: string;
    try {
      text = readFileSync(join(heldDir(root), n), 'utf8');
    } catch {
      continue;
    }
    const c = parseClaim(text);
    if (c) out.push(c);
  }
  return out;
}

/**
 * Is the holder live? A process it names must be running with its recorded start time (a
 * recycled pid is not it); a holder with no process, a fresh heartbeat. The person holds
 * until the claim expires or is released: a person at a terminal has no process to watch.
 */
export function holderAlive(root: string, h: ClaimHolder, now: number, presence: () => ReturnType<typeof readPresence> = () => readPresence(root)): boolean {
  if (h.pid !== undefined) return processAlive(h.pid, h.procStart);
  if (h.kind === 'human') return true;
  return presence().some((p) => p.id === h.id && isFresh(p, now));
}

/** The claims that hold now: not expired, holder live. */
export function liveClaims(root: string, now: number): Claim[] {
  let records: ReturnType<typeof readPresence> | undefined;
  const presence = () => (records ??= readPresence(root));
  return readClaims(root).filter((c) => c.expires > now && holderAlive(root, c.holder, now, presence));
}

/** The claims among `claims` on this file by anyone but `me`, oldest first. */
export function claimsOn(claims: Claim[], key: FileKey, me: string | null): Claim[] {
  return claims.filter((c) => c.project === key.project && c.holder.id !== me && covers(c.pattern, key.rel)).sort((a, b) => a.at - b.at);
}
