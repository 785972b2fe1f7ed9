// The inbound loops: one consume loop per durable consumer of this host (subjects.ts
// consumerFilters), each handing what arrives to the Importer (importer.ts, which writes
// or parks, then acks). The consumers keep their place on the hub, so a loop that stops
// (the connection went, the consumer was lost and made again) resumes where its acks did.

import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { rememberParties } from '../bus/presence/index.js';
import { localizeId, splitQualified } from '../wire/hosts.js';
import type { ImporterDeps, Result } from './importer.js';
import type { Sender } from './inbound.js';
import { isStreamOrConsumerNotFound, isTimeout } from './nats-errors.js';
import type { RelayStatus } from './store.js';
import { STREAM_NAME, consumerFilters, durableName, parseSubject } from './subjects.js';

/** How often the consumers' pending counts are asked for at most (the inbound backlog). */
const BACKLOG_EVERY_MS = 5_000;
/** …and at rest: the last figure was nought, nothing arrived and nothing failed since. */
const BACKLOG_QUIET_MS = 30_000;
/** How long one pull request waits on the hub for messages. */
const PULL_EXPIRES_MS = 30_000;
/**
 * The hub's sign of life on an open pull; two missed end it (InboundLoops.follow). On a
 * cluster a consumer's leader can die under a live connection, and its pulls with it: a 1 s
 * heartbeat leaves it within about 2 s. A lone server cannot lose a pull without the
 * connection going too (the reconnect restarts the loops, a deleted consumer is said at once),
 * so there the heartbeat is only a net, and a slow one: each is a message and a timer per
 * consumer, three consumers, the most frequent thing a relay at rest did.
 */
const PULL_HEARTBEAT_MS = 1_000;
const PULL_HEARTBEAT_LONE_MS = 10_000;
/**
 * How long the loops' JetStream client waits for the hub to answer a request (the consumer's
 * info, asked for at each start of a pull): while a cluster elects a consumer's leader the
 * request goes unanswered, and with the client's default of 5 s a question asked just
 * before the election ended waited out those 5 s after it (a failover took 8.9 s where the
 * election took 4.7 s). Asked again after a second, the new leader is found within a second
 * of its election.
 */
export const CONSUMER_ASK_TIMEOUT_MS = 1_000;
/** After a failed start of a pull: how long before the next (a timeout has waited already). */
const RETRY_MS = 500;
const RETRY_AFTER_TIMEOUT_MS = 50;

/** The idle heartbeat of a pull: short on a cluster, slow on a lone server. */
export function pullHeartbeatMs(clustered: boolean): number {
  return clustered ? PULL_HEARTBEAT_MS : PULL_HEARTBEAT_LONE_MS;
}

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
  /** The hub is a cluster (the server's INFO, read at each pull): pullHeartbeatMs. */
  clustered?(): boolean;
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

  /**
   * What the iterator says about itself: missed heartbeats (the consumer's leader died, or
   * the server lost the request) and a consumer or stream gone (the hub lost its store
   * under a live connection) end it, so the loop starts it over at once, asking for the
   * repair when something is missing.
   */
  private async follow(iter: ConsumerMessages, suffix: string): Promise<void> {
    for await (const s of iter.status()) {
      if (s.type === 'heartbeats_missed' || s.type === 'consumer_not_found' || s.type === 'stream_not_found' || s.type === 'consumer_deleted') {
        if (s.type !== 'heartbeats_missed') {
          this.d.status.lastError = `consume ${suffix}: ${s.type.replace(/_/g, ' ')}`;
          this.d.repair();
        }
        iter.stop();
        return;
      }
    }
  }

  private async consume(suffix: string): Promise<void> {
    const d = this.d;
    await d.ready;
    while (!d.stopping()) {
      try {
        const c = await d.js.consumers.get(STREAM_NAME, durableName(d.host, suffix));
        // A long pull (PULL_EXPIRES_MS) with an idle heartbeat (pullHeartbeatMs): at rest a
        // consumer costs one request per half minute and a heartbeat every 10 s on a lone
        // server, every second on a cluster, not a request every 2 s. The
        // client's own answer to missed heartbeats is a consumer info retried only every
        // `expires` (while a cluster elects a leader that would be 30 s), so the loop takes
        // them itself: the iterator is stopped and the consumer asked for again (each question
        // waits CONSUMER_ASK_TIMEOUT_MS at most, so a leader elected meanwhile is found at once).
        const iter = await c.consume({ max_messages: 1024, expires: PULL_EXPIRES_MS, idle_heartbeat: pullHeartbeatMs(d.clustered?.() ?? true) });
        void d.stopped.then(() => iter.stop());
        this.iterators.add(iter);
        void this.follow(iter, suffix);
        for await (const m of iter) d.importer.add(m);
        this.iterators.delete(iter);
        // An iterator that ends at once (the connection is away) must not turn this into a
        // loop of resolved promises that starves the timers the reconnect needs.
        if (!d.stopping()) await sleep(250);
      } catch (err) {
        if (d.stopping()) break;
        d.status.lastError = `consume ${suffix}: ${(err as Error).message}`;
        if (isStreamOrConsumerNotFound(err)) d.repair();
        await sleep(isTimeout(err) ? RETRY_AFTER_TIMEOUT_MS : RETRY_MS);
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

  /** What the status counted by the last ask (imports, duplicates, parked, the last error). */
  private seen = '';

  /**
   * Every BACKLOG_EVERY_MS at most; at rest (the last figure nought, nothing imported,
   * refused or failed since) every BACKLOG_QUIET_MS: what arrives meanwhile is counted as it
   * is imported, and three requests every few seconds were most of an idle relay's work.
   */
  async refresh(): Promise<void> {
    const st = this.status;
    const seen = `${st.imported} ${st.duplicates} ${st.parked} ${st.lastError ?? ''}`;
    const quiet = st.inboundBacklog === 0 && seen === this.seen;
    if (this.now() - this.last < (quiet ? BACKLOG_QUIET_MS : BACKLOG_EVERY_MS)) return;
    this.last = this.now();
    this.seen = seen;
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
