// One delivery cycle under the ledger's lock (docs/architecture.md, "Delivery"): read the
// session's ledger (ledger.ts) and each receive directory's new ids (walk.ts), plan what is
// pending (plan.ts), let the conduit choose what it shows, record that in flight in the log
// (ledger-log.ts), let the conduit show it, then confirm it. And the same cycle as a dry run,
// for `attend status`.

import { renameSync } from 'node:fs';
import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { fileStamp } from '../store/atomic.js';
import { type Message, type Reporter, readMessage } from '../store/messages.js';
import { createGate } from '../trust/gate.js';
import { type HeldCheck, UNCHECKED, createHeldCheck } from '../trust/held.js';
import { readLedger, settleRead } from './ledger.js';
import { retireLegacy } from './ledger-legacy.js';
import { type Flight, type LedgerRead, appendLedger, keep, ledgerFile, ledgerLock, settleFlight, takeKept, writeLedger } from './ledger-log.js';
import { clearOwed, readOwed } from './owed.js';
import { type BackEntry, type DirListing, type Ledger, type Pending, newLedger, noteBack, noteVia, planPending, recordConsumed } from './plan.js';
import { scopeDirName } from '../store/layout.js';
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
  /**
   * The conduit this cycle shows through (`sensor`, `deliverer`, `Stop hook`, `channel`):
   * written in the in-flight record and kept in the ledger once the wake is confirmed
   * (Ledger.via), so "shown by which conduit" is recorded, not read from presence later.
   */
  conduit?: string;
}

/**
 * What a cycle offers a conduit: the plan, and `again`, the ids among `fresh` that a conduit
 * had in flight when it died (issue 21 §6): it may have shown them, so they may repeat.
 */
export interface Offered extends Pending {
  again?: ReadonlySet<string>;
}

/**
 * What a conduit's `deliver` hands back: the ids this wake consumes (`consume`), its result,
 * and `emit`, which shows them (prints the lines, posts the wake, pushes the notifications).
 * `emit` runs only once the ledger holds `consume` in flight, and they are confirmed once it
 * returns (issue 21 §6: on a full disk the sensor printed, then failed to record, and showed
 * the same messages again). It returns the ids it could not show (a stdout that closed part
 * way, a post the session refused), which stay pending; if it throws, none of them count as
 * shown and the error propagates. Without `emit` (nothing to show, or a conduit that showed
 * nothing: held messages) `consume` is recorded at once.
 */
export interface Delivery<T> {
  consume: string[];
  result: T;
  emit?: () => string[] | void;
}

/**
 * One delivery cycle under the ledger's lock: read what is needed, plan what is pending for
 * `who` (tools/bus/delivery/plan.ts), let `deliver` choose what it shows, record it in flight
 * (with everything that was never going to be shown), show it (Delivery.emit), confirm it.
 * If `deliver` throws, or the record cannot be written (a full disk), nothing is shown,
 * nothing is recorded and the error propagates; the messages stay pending.
 */
export function takePending<T>(root: string, who: Identity, opts: TakeOptions, deliver: (p: Offered) => Delivery<T>): T {
  return withLock(ledgerLock(root, who.id), () => {
    const cycle = openCycle(root, who, opts);
    const { consume, result, emit } = deliver(cycle.pending);
    const flight = cycle.record(consume, emit !== undefined);
    let unshown: string[];
    try {
      unshown = handedBack(emit?.());
    } catch (err) {
      flight.settle(consume);
      throw err;
    }
    flight.settle(unshown);
    return result;
  });
}

/**
 * takePending for a conduit whose delivery is asynchronous (the deliverer: a socket post and
 * its receipt, issue 21 §2). The ledger's lock is held across the await, so no other conduit
 * (the Stop hook) takes the same messages while the post is on its way: record in flight,
 * post, confirm (or withdraw, when a receipt says the post was not delivered).
 */
export async function takePendingAsync<T>(
  root: string,
  who: Identity,
  opts: TakeOptions,
  deliver: (p: Offered) => { consume: string[]; result: T; emit?: () => Promise<string[] | void> },
): Promise<T> {
  return withLockAsync(ledgerLock(root, who.id), async () => {
    const cycle = openCycle(root, who, opts);
    const { consume, result, emit } = deliver(cycle.pending);
    const flight = cycle.record(consume, emit !== undefined);
    let unshown: string[];
    try {
      unshown = handedBack(await emit?.());
    } catch (err) {
      flight.settle(consume);
      throw err;
    }
    flight.settle(unshown);
    return result;
  });
}

/**
 * Give back what a conduit recorded but the session never got (issue 21 §2: the messages of
 * a deliverer post that drew a held, refused or dropped receipt after the post was confirmed):
 * pending again for the next conduit (the Stop hook, a sensor), and not counted as shown. A
 * cycle of its own that shows nothing, so the ledger is read, settled and written as every
 * cycle does; awaited, as the deliverer's own cycles are.
 */
export async function giveBackAsync(root: string, who: Identity, opts: TakeOptions, back: readonly BackEntry[]): Promise<void> {
  if (back.length === 0) return;
  await takePendingAsync(root, who, opts, (p) => {
    noteBack(p.ledger, back);
    return { consume: [], result: undefined };
  });
}

/** The ids `emit` handed back: only a list counts (a `void` callback may return anything). */
function handedBack(back: unknown): string[] {
  return Array.isArray(back) ? (back as string[]) : [];
}

interface Cycle {
  pending: Offered;
  /**
   * Record the cycle: `consume` as consumed, or, when the conduit will show it (`showing`),
   * in flight. Throws when the record cannot be written.
   */
  record(consume: string[], showing: boolean): { settle(unshown: string[]): void };
}

/** The cycle's reading and planning, and its record; under the ledger's lock. */
function openCycle(root: string, who: Identity, opts: TakeOptions): Cycle {
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
  // A wake the log has in flight: shown while its owner lives (folded in, and written so it
  // lasts), offered again once the owner is gone.
  const { folded, again } = settleRead(read);
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
    return { pending: { fresh: [], cold, hidden: 0, invited: [], ledger }, record: () => ({ settle: () => {} }) };
  }
  const deferred = opts.verify === 'presented';
  const held = createHeldCheck(root, gate);
  const plan = planPending(ledger, dirs, owed, who, now, gatedReader(root, held, dirs, opts.reporter, deferred));
  const unsettled = dirs.some((d) => d.unsettled === true);
  const offeredAgain = again && plan.fresh.some((m) => again.has(m.id)) ? new Set(plan.fresh.filter((m) => again.has(m.id)).map((m) => m.id)) : undefined;
  const pending: Offered = {
    fresh: plan.fresh,
    cold,
    hidden: plan.hidden,
    invited: plan.invited,
    ledger,
    ...(unsettled ? { unsettled } : {}),
    ...(held.unchecked > 0 ? { unchecked: held.unchecked } : {}),
    ...(deferred ? { check: (m: Message) => held.held(m) } : {}),
    ...(offeredAgain ? { again: offeredAgain } : {}),
  };
  const legacy = read.state === 'ok' ? read.legacy : undefined;
  // Written, the owed backlog it took is cleared (and an older form of the ledger retired).
  const written = () => {
    if (legacy !== undefined) retireLegacy(legacy);
    for (const o of owed) clearOwed(root, who.id, o.channel);
  };
  const record = (consume: string[], showing: boolean) => {
    held.save();
    const auto = plan.auto;
    if (!showing || consume.length === 0) {
      const consumed = [...auto, ...consume];
      recordConsumed(ledger, dirs, consumed, now);
      // A cycle that changed nothing writes nothing (a wake on a line still on its way, a tick):
      // without new consumption `above` only shrinks as the marks move, which the key shows.
      if (read.state !== 'ok' || legacy !== undefined || folded || again !== undefined || consumed.length > 0 || keyOf(ledger) !== was) keep(file, writeLedger(root, ledger), ledger);
      else if (stamp !== '-') keep(file, stamp, ledger);
      written();
      return { settle: () => {} };
    }
    // In flight: what was never going to be shown is consumed, `consume` is not yet (the
    // watermark stops below it, the index keeps it known), and the line names it and its owner.
    recordConsumed(ledger, dirs, auto, now);
    const { stamp: flown, flight } = appendLedger(root, ledger, consume, opts.conduit);
    return {
      settle: (unshown: string[]) => settle(root, { file, ledger, dirs, consume, flown, flight: flight!, now, warn: opts.warn, ...(opts.conduit !== undefined ? { by: opts.conduit } : {}) }, unshown, written),
    };
  };
  return { pending, record };
}

interface InFlightCycle {
  file: string;
  /**
   * The ledger as the in-flight line wrote it (what was never going to be shown consumed
   * already): the wake's shown ids are recorded onto it, all or a part. Recording the two in
   * turn moves the watermarks as recording them together would, without a copy of the ledger
   * per wake (its consumed set holds the grace window's every id).
   */
  ledger: Ledger;
  dirs: DirListing[];
  consume: string[];
  flown: string;
  flight: Flight;
  now: number;
  warn(line: string): void;
  /** The conduit showing the wake (TakeOptions.conduit). */
  by?: string;
}

/**
 * Settle a wake in flight once the conduit showed it, less `unshown`: all shown, confirm it
 * (one byte in place, which a full disk cannot refuse); none shown, withdraw it the same
 * way; a part shown, record that part as a new line (and withdraw it all if even that cannot
 * be written: a repeat, never a loss).
 */
function settle(root: string, c: InFlightCycle, unshown: string[], written: () => void): void {
  const skip = new Set(unshown);
  const shown = c.consume.filter((id) => !skip.has(id));
  if (shown.length === c.consume.length) {
    recordConsumed(c.ledger, c.dirs, c.consume, c.now);
    // As a reader of the settled record takes it (ledger.ts readLedger).
    noteVia(c.ledger, c.by, c.consume);
    try {
      keep(c.file, settleFlight(c.flight, 'c'), c.ledger);
      written();
    } catch (err) {
      // The confirm did not land: the wake counts as shown while this process lives, and
      // the next cycle here (or any conduit's) folds it in and writes it.
      c.warn(`attend: the wake was shown but its confirm was not recorded (${(err as Error).message}); it is recorded at the next wake`);
    }
    return;
  }
  let recorded = false;
  if (shown.length > 0) {
    recordConsumed(c.ledger, c.dirs, shown, c.now);
    noteVia(c.ledger, c.by, shown);
    recorded = true;
    try {
      keep(c.file, writeLedger(root, c.ledger), c.ledger);
      written();
      return;
    } catch {
      // withdrawn below: what was shown may repeat
    }
  }
  try {
    // Withdrawn: the in-flight line stands as the ledger, its wake pending again. The ledger
    // in hand holds the part that could not be written, so the next cycle reads the log.
    const stamp = settleFlight(c.flight, 'x');
    if (!recorded) keep(c.file, stamp, c.ledger);
  } catch (err) {
    c.warn(`attend: a wake that was not shown could not be withdrawn (${(err as Error).message}); it is offered again when this process ends`);
  }
}

/**
 * What the next delivery cycle would surface, without taking the lock or writing anything
 * (`attend status`: its unread count is what the next wake delivers, issue #10 §5).
 */
export function peekPending(root: string, who: Identity, opts: Pick<TakeOptions, 'now' | 'reporter'>): Pending {
  const now = opts.now;
  const read = readLedger(root, who.id);
  const cold = read.state !== 'ok';
  // A wake in flight whose owner lives is shown already (ledger.ts settleRead).
  settleRead(read);
  const ledger = read.state === 'ok' ? read.ledger : newLedger(who.id, now);
  const dirs = readDirs(root, who, ledger, cold, now, opts.reporter, false);
  const gate = createGate(root, who);
  if (gate.broken() !== null) return { fresh: [], cold, hidden: 0, invited: [], ledger };
  const plan = planPending(ledger, dirs, readOwed(root, who.id), who, now, gatedReader(root, createHeldCheck(root, gate), dirs, opts.reporter));
  return { fresh: plan.fresh, cold, hidden: plan.hidden, invited: plan.invited, ledger };
}

/**
 * readMessage through the gate: what it holds reads as null (consumed, never surfaced), and a
 * file its kept verdict says is held is not read at all. Past the pass's cap of verifications
 * (tools/bus/trust/held.ts) a file without a signature beside it reads as undefined: neither
 * surfaced nor consumed, so a later cycle verifies it.
 */
function gatedReader(root: string, held: HeldCheck, dirs: DirListing[], reporter: Reporter, policyOnly = false): (scope: Scope, id: string) => Message | null | undefined {
  const signed = new Map(dirs.map((d) => [d.dirName, d.signed]));
  return (scope, id) => {
    const dirSigned = signed.get(scopeDirName(scope));
    const isSigned = dirSigned === undefined || dirSigned.has(id);
    const a = held.admit(scope, id, { signed: isSigned });
    if (a === UNCHECKED) return undefined;
    if (a !== null) return null;
    const m = readMessage(root, scope, id, reporter);
    // A file known to have no signature is checked in full (no Ed25519 to run), so its verdict is kept.
    return m !== null && held.held(m, policyOnly && isSigned) === null ? m : null;
  };
}
