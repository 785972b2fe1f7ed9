// Retention (issue #12 §7, issue 21 §4): `attend cleanup --older-than 90d` removes a message
// older than the cut only when every party it was for has been shown it (or a person forces
// it), never on its id's age alone. Below a reader's watermark is not proof by itself: a
// cold start or a late arrival puts messages there unshown (tools/bus/delivery/shown.ts says
// what counts). Who a message was for:
//
//   - a message in a tray that names its addressees: each addressee, live or not (its mail
//     waits for it; after a /clear, the session that carries its ledger on);
//   - a channel message: the channel's members, as this cleanup leaves them (dead agents are
//     dropped from their channels by the same run), who had joined by the time it was sent,
//     and any member it is owed to through an invitation;
//   - #open, and tray mail that names nobody: the parties that read that directory while the
//     message was there, that is every party with a ledger for it that began before the
//     message (less the cold-start window) and is live now or was reading after the message
//     was made. #open is a commons, not a mailbox: a party that had stopped reading before a
//     message came is not held to it, and one that never read has nothing to be shown.
//
// The sender is never its own audience. A party with no ledger has not been shown anything,
// so it holds its messages back — except a person, who reads history in `attend chat` and
// `attend inbox` rather than through a delivery ledger, and whose history it is to keep (as
// `attend purge` treats people); a person who has a ledger is held to it like anyone. A party
// on another machine has no ledger here, so what is addressed to it here is kept until forced.
//
// After removals, each directory's index hint is compacted (a new file, so readers see
// "index replaced" once and list in full; nothing is missed).

import { readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type Scope, addressees } from '../../wire/envelope.js';
import { idTime } from '../../wire/ids.js';
import { writeFileAtomic } from '../store/atomic.js';
import { pruneStore, readChannels } from '../channels/membership.js';
import { INDEX_NAME } from '../store/dir-index.js';
import { scopeDir, scopeDirName } from '../store/layout.js';
import { type LedgerRead, type ShownVerdict, listLedgerIds, readLedger, shownVerdict } from '../delivery/index.js';
import { COLD_RECENT_MS } from '../delivery/plan.js';
import { readOwed } from '../delivery/owed.js';
import { readRegistry } from '../presence/registry.js';
import { SIGNAL_EXT, listIds, listScopes, readParties, readSignalFile } from '../store/messages.js';
import { sidecarPath } from '../trust/signing.js';

/** `90d`, `12h`, `30m`, `2w`, `45s` → milliseconds; null when it is not one. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  if (!m) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

/** A party that has not been shown a message, and why. */
export interface Unshown {
  id: string;
  why: Exclude<ShownVerdict, 'shown'>;
}

export interface RetentionItem {
  scope: Scope;
  id: string;
  bytes: number;
  /** Removed by --force although these parties have not been shown it. */
  forced?: Unshown[];
}

export interface KeptItem {
  scope: Scope;
  id: string;
  /** Who it is kept for. */
  for: Unshown[];
}

export interface RetentionPlan {
  remove: RetentionItem[];
  /** Older than the cut but not shown to every party it was for: kept (unless forced). */
  kept: KeptItem[];
}

export interface RetentionOptions {
  olderThanMs: number;
  now: number;
  /** Ids live now: a reader of #open that is live is held to what it has not been shown yet. */
  live: ReadonlySet<string>;
  /** Cleanup's liveness rule: a channel's audience is its members as cleanup leaves them. */
  isAlive(id: string): boolean;
  /** Whether a party is a person (without a ledger, a person holds nothing back). */
  isPerson(id: string): boolean;
  /** Remove old messages whoever has not been shown them (a person's decision). */
  force?: boolean;
}

interface Party {
  id: string;
  addressed?: boolean;
  joined?: number;
  /** Owed through an invitation and not delivered yet. */
  owed?: boolean;
}

export function planRetention(root: string, opts: RetentionOptions): RetentionPlan {
  const cut = opts.now - opts.olderThanMs;
  const ledgers = new Map<string, LedgerRead>();
  const ledgerOf = (id: string): LedgerRead => {
    let r = ledgers.get(id);
    if (r === undefined) ledgers.set(id, (r = readLedger(root, id)));
    return r;
  };
  // A /clear gives a session a new id and moves its ledger there (tools/bus/delivery/handover.ts):
  // mail to the old id is the new id's to be shown.
  const next = new Map<string, string>();
  for (const [id, e] of Object.entries(readRegistry(root).sessions)) if (e.previousSessionId !== undefined) next.set(e.previousSessionId, id);
  const current = (id: string): string => {
    let at = id;
    for (let hop = 0; hop < 16 && ledgerOf(at).state === 'missing' && next.has(at); hop++) at = next.get(at)!;
    return at;
  };
  const store = structuredClone(readChannels(root));
  pruneStore(store, opts.isAlive);
  const readerIds = listLedgerIds(root);
  /** The parties with a ledger for `dirName` that read it while a message of `time` was there. */
  const readersOf = (dirName: string, time: number, addressed: boolean): Party[] =>
    readerIds.flatMap((id) => {
      const r = ledgerOf(id);
      if (r.state !== 'ok' || r.ledger.marks[dirName] === undefined) return [];
      if (!addressed && r.ledger.created - COLD_RECENT_MS > time) return [];
      if (!opts.live.has(id) && r.ledger.updated < time) return [];
      return [{ id, addressed }];
    });
  const owedTo = new Map<string, Set<string>>();
  const owed = (id: string, channel: string): Set<string> => {
    const key = `${id}\n${channel}`;
    let s = owedTo.get(key);
    if (s === undefined) owedTo.set(key, (s = new Set(readOwed(root, id).filter((o) => o.channel === channel).flatMap((o) => o.ids))));
    return s;
  };

  const remove: RetentionItem[] = [];
  const kept: KeptItem[] = [];
  for (const scope of listScopes(root)) {
    const dirName = scopeDirName(scope);
    const dir = scopeDir(root, scope);
    const members = scope.kind === 'channel' ? Object.entries(store.channels[scope.name]?.members ?? {}) : [];
    for (const id of listIds(dir)) {
      const time = idTime(id);
      // Ids sort by time: past the cut, nothing later is old enough.
      if (time === null || time >= cut) continue;
      const path = join(dir, `${id}${SIGNAL_EXT}`);
      let st;
      try {
        st = statSync(path);
      } catch {
        continue;
      }
      let audience: Party[];
      if (scope.kind === 'open') audience = readersOf(dirName, time, false);
      else {
        const file = readSignalFile(path);
        if (!file.ok) {
          // Unreadable now (permissions, removed meanwhile): nothing is known of it, so it stays.
          if (!file.bad) continue;
          // Not a message at all: nobody will ever be shown it.
          audience = [];
        } else {
          const { fromId, to } = readParties(root, scope, id, path, file.envelope);
          let parties: Party[];
          if (scope.kind === 'channel') {
            parties = members.flatMap(([m, e]): Party[] => (owed(m, scope.name).has(id) ? [{ id: m, owed: true }] : e.joined <= time ? [{ id: m, joined: e.joined }] : []));
          } else {
            const named = addressees(to);
            parties = named.length > 0 ? named.map((n) => ({ id: current(n), addressed: true })) : readersOf(dirName, time, to === 'tray');
          }
          audience = parties.filter((p) => p.id !== fromId);
        }
      }
      const unshown: Unshown[] = [];
      for (const p of audience) {
        if (unshown.some((u) => u.id === p.id)) continue;
        const read = ledgerOf(p.id);
        if (opts.isPerson(p.id) && read.state !== 'ok') continue; // reads history in chat and inbox
        const why = p.owed
          ? 'not-yet'
          : shownVerdict(read, { id, time, arrived: st.ctimeMs, dirName, kind: scope.kind, ...(p.addressed ? { addressed: true } : {}), ...(p.joined !== undefined ? { joined: p.joined } : {}) });
        if (why !== 'shown') unshown.push({ id: p.id, why });
      }
      if (unshown.length > 0 && !opts.force) {
        kept.push({ scope, id, for: unshown });
        continue;
      }
      remove.push({ scope, id, bytes: st.size, ...(unshown.length > 0 ? { forced: unshown } : {}) });
    }
  }
  return { remove, kept };
}

/**
 * Remove what a plan lists, each message with its signature sidecar (issue 14), then compact
 * the index of every directory it removed from. Returns what was removed (a file may have
 * gone meanwhile).
 */
export function applyRetention(root: string, remove: RetentionItem[]): RetentionItem[] {
  const touched = new Set<string>();
  const done: RetentionItem[] = [];
  for (const r of remove) {
    const dir = scopeDir(root, r.scope);
    const path = join(dir, `${r.id}${SIGNAL_EXT}`);
    try {
      unlinkSync(path);
    } catch {
      continue; // gone meanwhile
    }
    done.push(r);
    touched.add(dir);
    try {
      unlinkSync(sidecarPath(path));
    } catch {
      // unsigned
    }
  }
  for (const dir of touched) compactIndex(dir);
  return done;
}

/**
 * Rewrite a directory's index hint with only the lines of messages still there. Readers that
 * remember an offset in the old file see a replaced index and list the directory once.
 */
function compactIndex(dir: string): { before: number; after: number } | null {
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
