// Has a party been shown a message? (issue 21 §4: retention removes only what every party it
// was for has been shown.) The consumption ledger answers "consumed", which is more than
// "shown": a cold start moves a watermark over history it never shows, a channel joined later
// starts at the join, and a message that arrives after the watermark passed its id (another
// machine's, imported after an outage; a copy made by hand) is below the watermark without
// ever having been above it. So below the watermark counts as shown only when the watermark
// went over the message while the message was there, after the party began reading it:
//
//   - the message was there when the ledger began, or came no later than its id's time plus
//     the grace window (a watermark trails the present by that window, so it cannot have
//     passed the id before the file was there); the file's ctime is when it came (a copy that
//     keeps its original mtime still gets a new ctime);
//   - and, unless the message is addressed to the party (a cold start shows addressed mail
//     whatever its age), it is no older than what the party's first cycle showed: the
//     cold-start window before the ledger began, and for a channel nothing before the join.
//
// In the consumed set above the watermark, or a late arrival consumed in the last grace
// window, counts as shown; a message given back (Ledger.back) does not. Pure over a ledger already read (readLedger).

import type { Scope } from '../../wire/envelope.js';
import type { LedgerRead } from './ledger-log.js';
import { COLD_RECENT_MS, LEDGER_GRACE_MS, type Ledger, consumedIn } from './plan.js';

/** Why a party has not been shown a message, or that it has. */
export type ShownVerdict =
  /** In the consumed set, or below a watermark that went over it while it was there. */
  | 'shown'
  /** The party has no ledger: nothing has delivered to it (or its ledger does not parse). */
  | 'no-ledger'
  /** At or above the party's watermark and not consumed: still to come. */
  | 'not-yet'
  /** Below the watermark, but it came after the watermark could have passed it. */
  | 'arrived-late'
  /** Older than anything the party's delivery began with (a cold start, a later join). */
  | 'before-ledger';

export interface ShownQuery {
  id: string;
  /** When the message was made (its id's time). */
  time: number;
  /** When the file came into its directory (its ctime), ms. */
  arrived: number;
  dirName: string;
  kind: Scope['kind'];
  /** Addressed to this party: a cold start shows it whatever its age. */
  addressed?: boolean;
  /** A channel: when the party joined it. */
  joined?: number;
}

/** A ledger's consumed set as a set: retention asks of every old message for every reader. */
const aboveSets = new WeakMap<Ledger, Set<string>>();

export function shownVerdict(read: LedgerRead, q: ShownQuery): ShownVerdict {
  if (read.state !== 'ok') return 'no-ledger';
  const l = read.ledger;
  // Given back (a post that drew a receipt after it was recorded): not shown, still to come.
  if (l.back?.some((b) => b.id === q.id)) return 'not-yet';
  let above = aboveSets.get(l);
  if (above === undefined) aboveSets.set(l, (above = new Set(l.above)));
  if (above.has(q.id) || (l.late !== undefined && q.id in l.late)) return 'shown';
  // Not in the consumed set: consumed only if below the watermark (consumedIn's other half).
  if (!consumedIn({ marks: l.marks, above: [] }, q.dirName, q.id)) return 'not-yet';
  if (q.arrived > Math.max(l.created, q.time + LEDGER_GRACE_MS)) return 'arrived-late';
  const began = q.addressed ? -Infinity : Math.max(l.created - COLD_RECENT_MS, q.kind === 'channel' ? (q.joined ?? -Infinity) : -Infinity);
  return q.time >= began ? 'shown' : 'before-ledger';
}
