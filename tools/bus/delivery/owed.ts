// Backlog owed to an invitee (issue #3 §3): when a session joins a channel it was invited to,
// the newest 50 messages of the channel are owed to its next delivery and the rest are
// counted. The delivery side reads and clears these; this module only keeps them.

import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { readTextIfAny, writeFileAtomic } from '../store/atomic.js';
import { stateDir } from '../store/layout.js';
import { withLock } from '../store/lock.js';

export const OWED_BACKLOG = 50;

export interface OwedEntry {
  /** Bare channel name, no `#`. */
  channel: string;
  /** Message ids, oldest first. */
  ids: string[];
  /** Messages older than these that are not shown. */
  olderCount: number;
  /** When the debt was recorded (ms). */
  at: number;
}

export function owedDir(root: string): string {
  return join(stateDir(root), 'owed');
}

function owedFile(root: string, sessionId: string): string {
  return join(owedDir(root), `${encodeURIComponent(sessionId)}.json`);
}

function parseOwed(text: string): OwedEntry[] {
  try {
    const o = JSON.parse(text) as unknown;
    if (!Array.isArray(o)) return [];
    return o.filter(
      (e): e is OwedEntry =>
        typeof e === 'object' && e !== null && typeof e.channel === 'string' && Array.isArray(e.ids) && e.ids.every((i: unknown) => typeof i === 'string') && typeof e.olderCount === 'number',
    ).map((e) => ({ channel: e.channel, ids: e.ids, olderCount: e.olderCount, at: typeof e.at === 'number' ? e.at : 0 }));
  } catch {
    return [];
  }
}

export function readOwed(root: string, sessionId: string): OwedEntry[] {
  try {
    const text = readTextIfAny(owedFile(root, sessionId));
    return text === null ? [] : parseOwed(text);
  } catch {
    return [];
  }
}

function update(root: string, sessionId: string, fn: (entries: OwedEntry[]) => OwedEntry[]): void {
  const file = owedFile(root, sessionId);
  withLock(`${file}.lock`, () => {
    const next = fn(readOwed(root, sessionId));
    if (next.length === 0) {
      try {
        unlinkSync(file);
      } catch {
        // nothing owed already
      }
      return;
    }
    // Durable with its directory (issue 21): a lost rename would drop a backlog owed to an
    // invitee, or bring back one already shown.
    writeFileAtomic(file, JSON.stringify(next), { syncDir: true });
  });
}

/** Record (or replace) what is owed for one channel. */
export function writeOwed(root: string, sessionId: string, entry: { channel: string; ids: string[]; olderCount: number }): void {
  const e: OwedEntry = { channel: entry.channel, ids: [...entry.ids], olderCount: entry.olderCount, at: Date.now() };
  update(root, sessionId, (all) => [...all.filter((x) => x.channel !== entry.channel), e]);
}

export function clearOwed(root: string, sessionId: string, channel: string): void {
  update(root, sessionId, (all) => all.filter((x) => x.channel !== channel));
}

/** A `/clear` carries the debt to the new session id (merged with anything already there). */
export function moveOwed(root: string, from: string, to: string): void {
  const old = readOwed(root, from);
  if (old.length === 0) return;
  update(root, to, (all) => [...all.filter((x) => !old.some((o) => o.channel === x.channel)), ...old]);
  try {
    unlinkSync(owedFile(root, from));
  } catch {
    // already gone
  }
}
