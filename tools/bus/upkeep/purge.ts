// Purging a channel's history (issue #5 `/purge`): delete what every live member has already
// been shown, and keep anything a live session could still be owed. The consumption ledger is
// the proof: a message is gone only when, for each live member, it is below the member's
// watermark for the channel, in its consumed set, older than its joining (and not owed through
// an invitation), or — for an agent without a readable ledger — older than what a cold start
// would ever deliver. Humans without a ledger read in chat or `attend inbox`, where history
// is theirs to keep or not, so they do not hold messages back.

import { statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { idTime } from '../../wire/ids.js';
import { readChannels } from '../channels/membership.js';
import { notFoundError } from '../../wire/errors.js';
import { scopeDir, scopeDirName } from '../store/layout.js';
import { COLD_RECENT_MS, readLedger } from '../delivery/ledger.js';
import { readOwed } from '../delivery/owed.js';
import { SIGNAL_EXT, assertScopeDir, listIds } from '../store/messages.js';
import { SIG_EXT } from '../trust/signing.js';

export interface PurgeResult {
  channel: string;
  removed: number;
  kept: number;
  /** Live members whose unconsumed messages were kept. */
  heldBy: string[];
}

interface Holder {
  id: string;
  /** Whether this member could still be shown the message. */
  owes(id: string, time: number): boolean;
}

function holderFor(root: string, channel: string, id: string, kind: 'agent' | 'human', joined: number, now: number): Holder | null {
  const dir = scopeDirName({ kind: 'channel', name: channel });
  const owed = new Set(readOwed(root, id).filter((o) => o.channel === channel).flatMap((o) => o.ids));
  const read = readLedger(root, id);
  if (read.state === 'ok') {
    const mark = read.ledger.marks[dir];
    const above = new Set(read.ledger.above);
    return {
      id,
      owes: (msg, time) => owed.has(msg) || (!(mark !== undefined && msg < mark) && !above.has(msg) && time >= joined),
    };
  }
  if (kind === 'human' && read.state === 'missing') return null;
  // No ledger to prove anything: keep what a cold start would still deliver.
  return { id, owes: (msg, time) => owed.has(msg) || time >= now - COLD_RECENT_MS };
}

export function purgeChannel(root: string, channel: string, opts: { now: number; liveIds: Set<string> }): PurgeResult {
  const store = readChannels(root);
  const c = store.channels[channel];
  if (!c) throw notFoundError(`no channel #${channel}`);
  const holders: Holder[] = [];
  for (const [id, m] of Object.entries(c.members)) {
    if (!opts.liveIds.has(id)) continue;
    const h = holderFor(root, channel, id, m.kind, m.joined, opts.now);
    if (h) holders.push(h);
  }
  const dir = scopeDir(root, { kind: 'channel', name: channel });
  // Never delete through a symbolic link (issue #10 item 4): the files it leads to are not ours.
  assertScopeDir(dir);
  let removed = 0;
  let kept = 0;
  const heldBy = new Set<string>();
  for (const id of listIds(dir)) {
    const name = `${id}${SIGNAL_EXT}`;
    let time = idTime(id);
    if (time === null) {
      try {
        time = statSync(join(dir, name)).mtimeMs;
      } catch {
        continue;
      }
    }
    const owing = holders.filter((h) => h.owes(id, time as number));
    if (owing.length > 0) {
      kept++;
      for (const h of owing) heldBy.add(h.id);
      continue;
    }
    try {
      unlinkSync(join(dir, name));
      removed++;
      try {
        unlinkSync(join(dir, `${id}${SIG_EXT}`));
      } catch {
        // unsigned
      }
    } catch {
      kept++;
    }
  }
  return { channel, removed, kept, heldBy: [...heldBy].sort() };
}
