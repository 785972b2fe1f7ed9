// One sensor wake: take what is pending from the ledger, plan the wake (tools/wire/wake.ts,
// shared with the MCP channel push and the drain) and write it as observation lines
// (docs/architecture.md, "Delivery"). The writer is injected, so this is testable against a real temporary bus with
// the lines captured; `tools/sensor/delivery.ts` schedules it and `tools/sensor/run.ts` wires the
// long-running loop around it.

import type { Identity } from '../identity/resolve.js';
import { noteShown, takePending } from '../bus/delivery/index.js';
import { resolveParents } from '../bus/delivery/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import type { Message, Reporter } from '../bus/store/index.js';
import { readFocus } from '../bus/presence/index.js';
import { DIGEST_THRESHOLD } from '../wire/party.js';
import type { NameLookup } from '../wire/display.js';
import { itemIds, planStreamWake, streamItems } from '../wire/wake.js';

export interface ScanDeps {
  root: string;
  now(): number;
  reporter: Reporter;
  names(me: string): NameLookup;
  /** Write one line to the Monitor; throws when stdout is gone (EPIPE). */
  write(line: string): void;
  warn(line: string): void;
  /** With `--trace`: one stderr line naming the ids a digest stood for. */
  trace?: ((line: string) => void) | undefined;
}

export interface ScanResult {
  delivered: string[];
  digest: boolean;
  /** Personal messages were left for the next wake (more than one wake shows): scan again. */
  later: boolean;
  /** stdout was closed while writing: the sensor must stop. */
  closed: boolean;
  /** A receive directory changed in a way its index does not explain yet: scan again after SETTLE_MS. */
  unsettled: boolean;
}

export function scanOnce(deps: ScanDeps, who: Identity): ScanResult {
  const res: ScanResult = { delivered: [], digest: false, later: false, closed: false, unsettled: false };
  takePending(deps.root, who, { now: deps.now(), reporter: deps.reporter, warn: deps.warn, conduit: 'sensor' }, (p) => {
    res.unsettled = p.unsettled === true;
    // Left unverified past the pass's cap: look again, whatever this wake shows.
    const more = (p.unchecked ?? 0) > 0;
    res.later = more;
    // Parents matter only when a digest may fold someone else's thread.
    const known = p.fresh.length > DIGEST_THRESHOLD ? resolveParents(deps.root, receiveScopes(deps.root, who), p.fresh, deps.reporter) : undefined;
    const plan = planStreamWake({ fresh: p.fresh, hidden: p.hidden, invited: p.invited, taught: p.ledger.taught, me: who.id, attention: { focus: readFocus(deps.root, who.id, deps.now()), now: deps.now() }, ...(known ? { known } : {}), ...(p.again ? { again: p.again } : {}) });
    const items = streamItems(plan, deps.names(who.id));
    // What the wake shows is chosen here and recorded in flight by takePending before a line
    // is written (issue 21 §6: a record that failed after the lines were printed showed them
    // twice); the lines go out in `emit`, and what a closed stdout cut off stays pending.
    const consume = items.flatMap(itemIds);
    let newest: Message | undefined;
    for (const item of items) {
      if (item.kind === 'message') newest = item.message as Message;
      else if (item.kind === 'teach') p.ledger.taught = true;
    }
    if (newest) noteShown(p.ledger, newest);
    const emit = (): string[] => {
      const shown: string[] = [];
      for (const item of items) {
        try {
          for (const line of item.lines) deps.write(line);
        } catch {
          // A message cut off mid-way by a closed stdout was never seen: leave it pending.
          res.closed = true;
          break;
        }
        shown.push(...itemIds(item));
        if (item.kind === 'digest') {
          // The digest stands for these messages; their headers are in `attend inbox`.
          res.digest = true;
          deps.trace?.(`attend: trace digest ids=${item.ids.join(',')}`);
        }
      }
      res.delivered = shown;
      res.later = (plan.later.length > 0 || more) && !res.closed;
      const done = new Set(shown);
      return consume.filter((id) => !done.has(id));
    };
    return { consume, result: undefined, emit };
  });
  return res;
}

