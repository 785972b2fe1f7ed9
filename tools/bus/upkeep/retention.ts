// Retention (issue #12 §7): `attend cleanup --older-than 90d` removes messages older than a
// duration from every scope, but never one a live reader has not been shown yet — the same
// proof `purge` uses (the consumption ledger), applied to whoever reads each directory:
// #open is read by every live session, a channel by its live members, a tray by the live
// sessions at its origin. After removals, each directory's index hint is compacted (a new
// file, so readers see "index replaced" once and list in full; nothing is missed).

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Scope } from '../../wire/envelope.js';
import { idTime } from '../../wire/ids.js';
import { attendKey } from '../../wire/names.js';
import { writeFileAtomic } from '../store/atomic.js';
import { readChannels } from '../channels/membership.js';
import { INDEX_NAME } from '../store/dir-index.js';
import { scopeDir, scopeDirName } from '../store/layout.js';
import { COLD_RECENT_MS, readLedger } from '../delivery/ledger.js';
import { readOwed } from '../delivery/owed.js';
import type { Peer } from '../presence/roster.js';
import { SIGNAL_EXT, listIds, listScopes } from '../store/messages.js';

/** `90d`, `12h`, `30m`, `2w`, `45s` → milliseconds; null when it is not one. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  if (!m) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

export interface RetentionItem {
  scope: Scope;
  id: string;
  bytes: number;
}

export interface RetentionPlan {
  remove: RetentionItem[];
  /** Older than the cut but not yet shown to a live reader: kept. */
  kept: number;
  heldBy: string[];
}

/** Could `sid` still be shown message `id` (time `time`) of directory `dirName`? */
function owes(root: string, sid: string, dirName: string, channel: string | undefined, id: string, time: number, now: number): boolean {
  if (channel !== undefined && readOwed(root, sid).some((o) => o.channel === channel && o.ids.includes(id))) return true;
  const read = readLedger(root, sid);
  if (read.state !== 'ok') return time >= now - COLD_RECENT_MS; // a cold start's window
  const mark = read.ledger.marks[dirName];
  return !(mark !== undefined && id < mark) && !read.ledger.above.includes(id);
}

export function planRetention(root: string, opts: { olderThanMs: number; now: number; live: Peer[] }): RetentionPlan {
  const cut = opts.now - opts.olderThanMs;
  const agents = opts.live.filter((p) => p.kind === 'agent');
  const channels = readChannels(root).channels;
  const remove: RetentionItem[] = [];
  let kept = 0;
  const heldBy = new Set<string>();
  for (const scope of listScopes(root)) {
    const dirName = scopeDirName(scope);
    const dir = scopeDir(root, scope);
    const readers =
      scope.kind === 'open'
        ? agents
        : scope.kind === 'channel'
          ? agents.filter((p) => channels[scope.name]?.members[p.id] !== undefined)
          : agents.filter((p) => attendKey(p.origin) === scope.key);
    for (const id of listIds(dir)) {
      const time = idTime(id);
      // Ids sort by time: past the cut, nothing later is old enough.
      if (time === null || time >= cut) continue;
      const holding = readers.filter((p) => owes(root, p.id, dirName, scope.kind === 'channel' ? scope.name : undefined, id, time, opts.now));
      if (holding.length > 0) {
        kept++;
        for (const p of holding) heldBy.add(p.id);
        continue;
      }
      let bytes = 0;
      try {
        bytes = statSync(join(dir, `${id}${SIGNAL_EXT}`)).size;
      } catch {
        continue;
      }
      remove.push({ scope, id, bytes });
    }
  }
  return { remove, kept, heldBy: [...heldBy].sort() };
}

/**
 * Rewrite a directory's index hint with only the lines of messages still there. Readers that
 * remember an offset in the old file see a replaced index and list the directory once.
 */
export function compactIndex(dir: string): { before: number; after: number } | null {
  let text: string;
  try {
    text = readFileSync(join(dir, INDEX_NAME), 'utf8');
  } catch {
    return null;
  }
  const present = new Set(listIds(dir));
  const lines = text.split('\n').filter((l) => l.length > 0);
  const keep = lines.filter((l) => present.has(l.split(' ')[0] ?? ''));
  if (keep.length === lines.length) return { before: lines.length, after: lines.length };
  writeFileAtomic(join(dir, INDEX_NAME), keep.length > 0 ? `${keep.join('\n')}\n` : '');
  return { before: lines.length, after: keep.length };
}
