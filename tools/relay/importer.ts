// The inbound pipeline: messages the consumers deliver are gathered into batches (whatever
// arrived by the time the event loop turns, at most MAX_BATCH), each batch planned message
// by message (tools/relay/inbound.ts planImport), written in one go (every file synced, then
// renamed, each directory synced once), and only then acked. Nothing is acked before its
// data is durable; a batch the bus refused is left unacked and comes again.
//
// Batching is what lets one relay import thousands of messages a second: one sync of the
// directory per batch instead of one round of temporary, sync and index line per message.
// Two batches are in flight at most (MAX_IN_FLIGHT): the next is planned and written while
// the one before is synced, and acks go out in batch order.

import type { JsMsg } from '@nats-io/jetstream';
import { type Incoming, type Plan, type Sender, type Write, planImport, writeImports } from './inbound.js';
import type { OwnWrites } from './own-writes.js';
import type { ImportedSet } from './store.js';
import type { SharedState } from './state.js';

const MAX_BATCH = 512;

export type Result = 'written' | 'duplicate' | 'own' | { reason: string };

export interface ImporterDeps {
  root: string;
  self: string;
  imported: ImportedSet;
  now(): number;
  state: Pick<SharedState, 'keyKnown' | 'nodeSigns' | 'claim' | 'dissolved' | 'fetchKeys'>;
  trace: ((line: string) => void) | null;
  /** Told of each batch's index lines, so the outbound loop is not woken by them (own-writes.ts). */
  own?: OwnWrites;
  /** `from`: the sender of a written message, as its line says. */
  onResult(m: JsMsg, out: Result, from: Sender | undefined): void;
  onError(err: Error): void;
}

function incomingOf(m: JsMsg): Incoming {
  const sig = m.headers?.get('Attend-Sig');
  return {
    subject: m.subject,
    data: m.data,
    id: m.headers?.get('Attend-Id') || undefined,
    origin: m.headers?.get('Attend-Origin') || undefined,
    ...(sig ? { sig: Buffer.from(sig, 'base64') } : {}),
    timeMs: Math.floor(Number(m.info.timestampNanos) / 1e6),
    redelivered: m.info.redelivered,
  };
}

/**
 * Batches written at once: while one batch's files and directory are synced, the next is
 * planned and its files written, so the disk's waits overlap instead of queueing. Acks still
 * go out in batch order, each once its own batch and every earlier one is durable.
 */
const MAX_IN_FLIGHT = 2;

interface Planned {
  plans: { m: JsMsg; plan: Plan }[];
  writes: Write[];
  /** Its entries in the shared pending map (removed once it is settled). */
  paths: [string, Uint8Array][];
  /** Batches whose writes had failed when this one was planned (Importer.failures). */
  failuresAtPlan: number;
  t0: number;
  size: number;
}

export class Importer {
  private queue: JsMsg[] = [];
  private scheduled = false;
  private planning = false;
  /** Every batch being planned, written or settled. */
  private readonly active = new Set<Promise<void>>();
  /** Planned files not on disk yet, of every batch in flight: path → bytes. */
  private readonly pending = new Map<string, Uint8Array>();
  /** The last batch's settling: each batch acks after the one before it. */
  private tail: Promise<void> = Promise.resolve();
  /** Batches whose writes failed, counted as they settle (in order). */
  private failures = 0;

  constructor(private readonly deps: ImporterDeps) {}

  add(m: JsMsg): void {
    this.queue.push(m);
    this.schedule();
  }

  /** Resolves when nothing is queued, being written or waiting for its acks. */
  async idle(): Promise<void> {
    while (this.queue.length > 0 || this.active.size > 0 || this.scheduled) {
      await Promise.race([...this.active, new Promise<void>((r) => setImmediate(r))]);
    }
  }

  /** Whatever else has arrived by the next turn of the event loop joins the next batch. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.next();
    });
  }

  /** Plan the next batch (one at a time, in arrival order) and start its write. */
  private next(): void {
    if (this.planning || this.queue.length === 0 || this.active.size >= MAX_IN_FLIGHT) return;
    this.planning = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    const run = (async () => {
      let planned: Planned;
      try {
        planned = await this.plan(batch);
      } finally {
        this.planning = false;
      }
      // The next batch is planned (and written) while this one's syncs run.
      if (this.queue.length > 0) this.schedule();
      await this.write(planned);
    })();
    this.active.add(run);
    void run.finally(() => {
      this.active.delete(run);
      if (this.queue.length > 0) this.schedule();
    });
  }

  private async plan(batch: JsMsg[]): Promise<Planned> {
    const d = this.deps;
    const t0 = Date.now();
    const pending = this.pending;
    const ctx = { root: d.root, self: d.self, imported: d.imported, now: d.now(), pending, keyKnown: d.state.keyKnown.bind(d.state), nodeSigns: d.state.nodeSigns.bind(d.state), claim: d.state.claim.bind(d.state), dissolved: d.state.dissolved.bind(d.state) };
    const plans: { m: JsMsg; plan: Plan }[] = [];
    const writes: Write[] = [];
    const paths: [string, Uint8Array][] = [];
    for (const m of batch) {
      const inc = incomingOf(m);
      let plan: Plan;
      try {
        plan = planImport(ctx, inc);
        if (plan.kind === 'need-key') {
          // Signed by a key this bus has not recorded yet: the origin put it on the hub
          // before it published the message (tools/relay/outbound-loop.ts publishChunk).
          await d.state.fetchKeys(plan.origin, plan.node);
          plan = planImport({ ...ctx, fetched: true }, inc);
        }
      } catch (err) {
        // Parking itself failed (the bus is unusable): leave it for redelivery.
        d.onError(err as Error);
        m.nak(1_000);
        continue;
      }
      if (plan.kind === 'write') {
        writes.push(plan);
        const path = `${plan.dir}/${plan.id}.signal`;
        pending.set(path, plan.data);
        paths.push([path, plan.data]);
      }
      plans.push({ m, plan });
    }
    return { plans, writes, paths, failuresAtPlan: this.failures, t0, size: batch.length };
  }

  /** Write a planned batch, then (after every earlier batch) ack it, or leave it for redelivery. */
  private async write(b: Planned): Promise<void> {
    const d = this.deps;
    const wrote = writeImports(d.imported, b.writes, d.own).then(
      () => true,
      (err: Error) => {
        d.onError(err);
        return false;
      },
    );
    const before = this.tail;
    const settled = (async () => {
      const ok = await wrote;
      await before;
      for (const [path, data] of b.paths) if (this.pending.get(path) === data) this.pending.delete(path);
      if (!ok) this.failures++;
      // This batch, or one in flight when it was planned, failed: what was taken for "already
      // here" from a planned file may not be on disk, so those go round again with the writes
      // (a redelivery finds the same bytes on disk and is acked then).
      const doubt = this.failures !== b.failuresAtPlan;
      for (const { m, plan } of b.plans) {
        if (doubt && (plan.kind === 'write' || plan.kind === 'duplicate')) m.nak(1_000);
        else this.settle(m, plan);
      }
      if (ok) d.trace?.(`trace: imported a batch of ${b.size} (${b.writes.length} written) in ${Date.now() - b.t0}ms`);
    })();
    this.tail = settled;
    await settled;
  }

  private settle(m: JsMsg, plan: Plan): void {
    const d = this.deps;
    if (plan.kind === 'write') d.onResult(m, 'written', plan.from);
    else if (plan.kind === 'duplicate' || plan.kind === 'own') d.onResult(m, plan.kind, undefined);
    else if (plan.kind === 'parked') d.onResult(m, { reason: plan.reason }, undefined);
    m.ack();
  }
}
