// One delivery cycle under the ledger's lock (docs/architecture.md, "Delivery"): read the
// session's ledger (ledger.ts) and each receive directory's new ids (walk.ts), plan what is
// pending (plan.ts), hand it to the conduit, record what it consumed in the log
// (ledger-log.ts). And the same cycle as a dry run, for `attend status`.

import { renameSync } from 'node:fs';
import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { fileStamp } from '../store/atomic.js';
import { type Message, type Reporter, readMessage } from '../store/messages.js';
import { type Gate, createGate } from '../trust/gate.js';
import { readLedger } from './ledger.js';
import { retireLegacy } from './ledger-legacy.js';
import { type LedgerRead, keep, ledgerFile, ledgerLock, takeKept, writeLedger } from './ledger-log.js';
import { clearOwed, readOwed } from './owed.js';
import { type Ledger, type Pending, newLedger, planPending, recordConsumed } from './plan.js';
import { readDirs } from './walk.js';
import { withLock, withLockAsync } from '../store/lock.js';

export interface TakeOptions {
  now: number;
  reporter: Reporter;
  warn(line: string): void;
  /**
   * `presented`: the plan checks policy only, and the conduit verifies signatures of what it
   * presents with Pending.check before presenting it (the drain). Default `all`.
   */
  verify?: 'all' | 'presented';
}

/**
 * One delivery cycle under the ledger's lock: read what is needed, plan what is pending for
 * `who` (tools/bus/delivery/plan.ts), hand it to `deliver`, then record what `deliver` says it
 * consumed (plus everything that was never going to be shown). If `deliver` throws, nothing
 * is recorded and the error propagates.
 */
export function takePending<T>(root: string, who: Identity, opts: TakeOptions, deliver: (p: Pending) => { consume: string[]; result: T }): T {
  return withLock(ledgerLock(root, who.id), () => {
    const cycle = openCycle(root, who, opts);
    const { consume, result } = deliver(cycle.pending);
    cycle.record(consume);
    return result;
  });
}

/**
 * takePending for a conduit whose delivery is asynchronous (the deliverer: a socket post and
 * its receipt, issue 21 §2). The ledger's lock is held across the await, so no other conduit
 * (the Stop hook) takes the same messages while the post is on its way: deliver, then record.
 */
export async function takePendingAsync<T>(root: string, who: Identity, opts: TakeOptions, deliver: (p: Pending) => Promise<{ consume: string[]; result: T }>): Promise<T> {
  return withLockAsync(ledgerLock(root, who.id), async () => {
    const cycle = openCycle(root, who, opts);
    const { consume, result } = await deliver(cycle.pending);
    cycle.record(consume);
    return result;
  });
}

/** The cycle's reading and planning, and the recording of what the conduit consumed; under the ledger's lock. */
function openCycle(root: string, who: Identity, opts: TakeOptions): { pending: Pending; record(consume: string[]): void } {
  const now = opts.now;
  const file = ledgerFile(root, who.id);
  const stamp = fileStamp(file);
  const mine = takeKept(file);
  const read: LedgerRead = mine !== undefined && stamp !== '-' && mine.stamp === stamp ? { state: 'ok', ledger: mine.ledger } : readLedger(root, who.id);
  let ledger: Ledger;
  let cold = false;
  if (read.state === 'ok') ledger = read.ledger;
  else {
    if (read.state === 'corrupt') {
      const aside = `${read.file}.corrupt-${now}`;
      try {
        renameSync(read.file, aside);
      } catch {
        // gone already; rebuilding is all that matters
      }
      opts.warn(`attend: the delivery ledger ${read.file} was not valid; moved it to ${aside} and rebuilt it (cold-start rule)`);
    }
    ledger = newLedger(who.id, now);
    cold = true;
  }
  // What the ledger said before, less the consumed ids (the costly part, checked by count).
  const keyOf = (l: Ledger) => JSON.stringify({ ...l, above: l.above.length, updated: 0 });
  const was = keyOf(ledger);
  const dirs = readDirs(root, who, ledger, cold, now, opts.reporter);
  const owed = readOwed(root, who.id);
  // The one check before anything reaches a conduit (issue 14, tools/bus/trust/gate.ts): a held
  // message (bad signature, refused by policy) reads as unreadable, so the plan records it
  // as consumed and never hands it over; `attend inbox --held` lists it for the owner.
  // Under a policy that did not parse nothing is delivered and nothing is recorded.
  const gate = createGate(root, who);
  const broken = gate.broken();
  if (broken !== null) {
    opts.warn(`attend: ${broken}`);
    return { pending: { fresh: [], cold, hidden: 0, invited: [], ledger }, record: () => {} };
  }
  const deferred = opts.verify === 'presented';
  const plan = planPending(ledger, dirs, owed, who, now, gatedReader(root, gate, opts.reporter, deferred));
  const unsettled = dirs.some((d) => d.unsettled === true);
  const pending: Pending = {
    fresh: plan.fresh,
    cold,
    hidden: plan.hidden,
    invited: plan.invited,
    ledger,
    ...(unsettled ? { unsettled } : {}),
    ...(deferred ? { check: (m: Message) => gate.held(m) } : {}),
  };
  const record = (consume: string[]) => {
    const consumed = [...plan.auto, ...consume];
    recordConsumed(ledger, dirs, consumed, now);
    // A cycle that changed nothing writes nothing (a wake on a line still on its way, a tick):
    // without new consumption `above` only shrinks as the marks move, which the key shows.
    const legacy = read.state === 'ok' ? read.legacy : undefined;
    if (read.state !== 'ok' || legacy !== undefined || consumed.length > 0 || keyOf(ledger) !== was) keep(file, writeLedger(root, ledger), ledger);
    else if (stamp !== '-') keep(file, stamp, ledger);
    if (legacy !== undefined) retireLegacy(legacy);
    for (const o of owed) clearOwed(root, who.id, o.channel);
  };
  return { pending, record };
}

/**
 * What the next delivery cycle would surface, without taking the lock or writing anything
 * (`attend status`: its unread count is what the next wake delivers, issue #10 §5).
 */
export function peekPending(root: string, who: Identity, opts: Pick<TakeOptions, 'now' | 'reporter'>): Pending {
  const now = opts.now;
  const read = readLedger(root, who.id);
  const cold = read.state !== 'ok';
  const ledger = read.state === 'ok' ? read.ledger : newLedger(who.id, now);
  const dirs = readDirs(root, who, ledger, cold, now, opts.reporter, false);
  const gate = createGate(root, who);
  if (gate.broken() !== null) return { fresh: [], cold, hidden: 0, invited: [], ledger };
  const plan = planPending(ledger, dirs, readOwed(root, who.id), who, now, gatedReader(root, gate, opts.reporter));
  return { fresh: plan.fresh, cold, hidden: plan.hidden, invited: plan.invited, ledger };
}

/** readMessage through the gate: what it holds reads as null (consumed, never surfaced). */
function gatedReader(root: string, gate: Gate, reporter: Reporter, policyOnly = false): (scope: Scope, id: string) => Message | null {
  return (scope, id) => {
    const m = readMessage(root, scope, id, reporter);
    return m !== null && (policyOnly ? gate.heldByPolicy(m) : gate.held(m)) === null ? m : null;
  };
}
