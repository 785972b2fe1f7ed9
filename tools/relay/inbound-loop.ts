// The inbound loops: one consume loop per durable consumer of this host (subjects.ts
// consumerFilters), each handing what arrives to the Importer (importer.ts, which writes
// or parks, then acks). The consumers keep their place on the hub, so a loop that stops
// (the connection went, the consumer was lost and made again) resumes where its acks did.

import { setTimeout as sleep } from 'node:timers/promises';
import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { rememberParties } from '../bus/presence/index.js';
import { localizeId, splitQualified } from '../wire/hosts.js';
import type { ImporterDeps, Result } from './importer.js';
import type { Sender } from './inbound.js';
import { isStreamOrConsumerNotFound } from './nats-errors.js';
import type { RelayStatus } from './store.js';
import { STREAM_NAME, consumerFilters, durableName, parseSubject } from './subjects.js';

/** How often the consumers' pending counts are asked for at most (the inbound backlog). */
const BACKLOG_EVERY_MS = 5_000;

interface InboundDeps {
  js: JetStreamClient;
  host: string;
  importer: { add(m: JsMsg): void };
  status: RelayStatus;
  /** A consumer or the stream is missing on the hub: make them again (hub.ts HubRepair). */
  repair(): void;
  /** Channel state and keys first (state.ts SharedState.start): imports are judged against them. */
  ready: Promise<void>;
  stopping(): boolean;
  stopped: Promise<void>;
}

export class InboundLoops {
  private readonly iterators = new Set<{ stop(): void }>();

  constructor(private readonly d: InboundDeps) {}

  /** One loop per consumer, each until the relay stops. */
  start(): Promise<void>[] {
    return consumerFilters(this.d.host).map(({ suffix }) => this.consume(suffix));
  }

  /**
   * After a reconnect the pull requests the old server held are gone: start them over at
   * once rather than waiting for missed heartbeats.
   */
  restart(): void {
    for (const it of this.iterators) it.stop();
  }

  private async consume(suffix: string): Promise<void> {
    const d = this.d;
    await d.ready;
    while (!d.stopping()) {
      try {
        const c = await d.js.consumers.get(STREAM_NAME, durableName(d.host, suffix));
        // expires 2 s: a hub that died is noticed within two missed heartbeats (1 s each).
        // Not longer to save requests at rest: after missed heartbeats the client asks for the
        // consumer's info, and while a cluster elects its leader that fails and is retried
        // only after `expires` (30 s in a bench probe with 30 s pulls, 5–8 s with these).
        const iter = await c.consume({ max_messages: 1024, expires: 2_000 });
        void d.stopped.then(() => iter.stop());
        this.iterators.add(iter);
        for await (const m of iter) d.importer.add(m);
        this.iterators.delete(iter);
        // An iterator that ends at once (the connection is away) must not turn this into a
        // loop of resolved promises that starves the timers the reconnect needs.
        if (!d.stopping()) await sleep(250);
      } catch (err) {
        if (d.stopping()) break;
        d.status.lastError = `consume ${suffix}: ${(err as Error).message}`;
        if (isStreamOrConsumerNotFound(err)) d.repair();
        await sleep(500);
      }
    }
  }
}

/** A sender is remembered again at most this often (the known-parties file keeps `seen` to 10 minutes anyway). */
const REMEMBER_EVERY_MS = 60_000;

/**
 * What each import means for the status and for routing: a sender whose message was written
 * here is on its origin host (tray replies go back there), as this machine names it; and it
 * is a party this bus has known (issue 21 item 1), with its kind, origin and host, so it can
 * be left a message while its machine is offline and the hub holds it.
 */
export function importOutcomes(d: { root: string; status: RelayStatus; senders: Map<string, string>; host: string; now(): number; log(line: string): void }): Pick<ImporterDeps, 'onResult' | 'onError'> {
  const remembered = new Map<string, number>();
  const remember = (id: string, from: Sender, origin: string) => {
    const now = d.now();
    if (now - (remembered.get(id) ?? -Infinity) < REMEMBER_EVERY_MS) return;
    remembered.set(id, now);
    rememberParties(d.root, [{ id, kind: from.kind, name: splitQualified(id)?.id ?? id, origin: from.origin, host: origin }], now);
  };
  return {
    onResult: (m: Pick<JsMsg, 'subject'>, out: Result, from: Sender | undefined) => {
      if (out === 'written') {
        d.status.imported++;
        const route = parseSubject(m.subject);
        // As this machine names the sender: a username elsewhere is `host:name`, never ours.
        if (route && from) {
          const id = localizeId(from.id, route.origin, d.host);
          d.senders.set(id, route.origin);
          remember(id, from, route.origin);
        }
      } else if (out === 'duplicate') d.status.duplicates++;
      else if (typeof out === 'object') {
        d.status.parked++;
        d.log(`attend relay: parked ${m.subject}: ${out.reason}`);
      }
      d.status.lastContact = d.now();
    },
    onError: (err: Error) => {
      // The bus refused the write (disk full, permissions): nothing of the batch is acked.
      d.status.lastError = `import: ${err.message}`;
    },
  };
}

/** The inbound backlog: stream messages for this host not yet imported, asked for now and then. */
export class InboundBacklog {
  private last = 0;

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly host: string,
    private readonly status: RelayStatus,
    private readonly now: () => number,
  ) {}

  async refresh(): Promise<void> {
    if (this.now() - this.last < BACKLOG_EVERY_MS) return;
    this.last = this.now();
    try {
      let n = 0;
      for (const { suffix } of consumerFilters(this.host)) {
        const ci = await this.jsm.consumers.info(STREAM_NAME, durableName(this.host, suffix));
        n += ci.num_pending + ci.num_ack_pending;
      }
      this.status.inboundBacklog = n;
      this.status.lastContact = this.now();
    } catch {
      // the hub is away: keep the last figure
    }
  }
}
