// The inbound pipeline: messages the consumers deliver are gathered into batches (whatever
// arrived by the time the event loop turns, at most MAX_BATCH), each batch planned message
// by message (tools/relay/inbound.ts planImport), written in one go (every file synced, then
// renamed, each directory synced once), and only then acked. Nothing is acked before its
// data is durable; a batch the bus refused is left unacked and comes again.
//
// Batching is what lets one relay import thousands of messages a second: one sync of the
// directory per batch instead of one round of temporary, sync and index line per message.

import type { JsMsg } from '@nats-io/jetstream';
import { type Incoming, type Plan, type Sender, type Write, planImport, writeImports } from './inbound.js';
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

export class Importer {
  private queue: JsMsg[] = [];
  private running: Promise<void> | null = null;

  constructor(private readonly deps: ImporterDeps) {}

  add(m: JsMsg): void {
    this.queue.push(m);
    // Whatever else has arrived by the next turn of the event loop joins this batch.
    if (!this.running) this.running = new Promise<void>((r) => setImmediate(r)).then(() => this.drain());
  }

  /** Resolves when nothing is queued or being written. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.flush(batch);
      }
    } finally {
      this.running = null;
    }
  }

  private async flush(batch: JsMsg[]): Promise<void> {
    const d = this.deps;
    const t0 = Date.now();
    const pending = new Map<string, Uint8Array>();
    const ctx = { root: d.root, self: d.self, imported: d.imported, now: d.now(), pending, keyKnown: d.state.keyKnown.bind(d.state), nodeSigns: d.state.nodeSigns.bind(d.state), claim: d.state.claim.bind(d.state), dissolved: d.state.dissolved.bind(d.state) };
    const plans: { m: JsMsg; plan: Plan }[] = [];
    const writes: Write[] = [];
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
        pending.set(`${plan.dir}/${plan.id}.signal`, plan.data);
      }
      plans.push({ m, plan });
    }
    try {
      await writeImports(d.imported, writes);
    } catch (err) {
      d.onError(err as Error);
      for (const { m, plan } of plans) {
        if (plan.kind === 'write') m.nak(1_000);
        else this.settle(m, plan);
      }
      return;
    }
    for (const { m, plan } of plans) this.settle(m, plan);
    d.trace?.(`trace: imported a batch of ${batch.length} (${writes.length} written) in ${Date.now() - t0}ms`);
  }

  private settle(m: JsMsg, plan: Plan): void {
    const d = this.deps;
    if (plan.kind === 'write') d.onResult(m, 'written', plan.from);
    else if (plan.kind === 'duplicate' || plan.kind === 'own') d.onResult(m, plan.kind, undefined);
    else if (plan.kind === 'parked') d.onResult(m, { reason: plan.reason }, undefined);
    m.ack();
  }
}
