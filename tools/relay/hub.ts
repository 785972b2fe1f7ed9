// The hub: connect to it, make the stream and this host's durable consumers when they are
// missing, and make them again whenever it lost them (a hub that lost its store, a new
// server: docs/cross-machine.md, "Failure semantics"). `attend relay` (run.ts) and
// `attend relay resync` (resync.ts) both start here.

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Authenticator, connect, credsAuthenticator, nanos, nkeyAuthenticator, type NatsConnection, type ServerInfo } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JetStreamManager, RetentionPolicy, type StreamInfo, StorageType } from '@nats-io/jetstream';
import type { RelaySettings } from './config.js';
import { isConsumerNotFound, isNoQuorum, isRefused, isStreamNotFound, isTimeout, isTooFewPeers } from './nats-errors.js';
import { STREAM_NAME, SUBJECT_PREFIX, consumerFilters, durableName } from './subjects.js';

export const MAX_MSG_BYTES = 128 * 1024;
const DAY_MS = 24 * 3600_000;
/** How long the hub keeps a message: also how far back a relay re-offers after the hub lost its store. */
export const STREAM_MAX_AGE_MS = 30 * DAY_MS;

export type HubSettings = RelaySettings & { servers: string[] };

export async function connectHub(s: HubSettings, name: string, opts: { waitOnFirstConnect?: boolean } = {}): Promise<NatsConnection> {
  return connect({
    servers: s.servers,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: opts.waitOnFirstConnect ?? true,
    pingInterval: 5_000,
    inboxPrefix: `_INBOX_${s.host}`,
    ...(s.creds ? { authenticator: authenticatorFrom(s.creds) } : {}),
    ...(s.tlsCa ? { tls: { caFile: s.tlsCa } } : {}),
  });
}

/** Node's codes for a certificate the CA given does not vouch for (or no CA given for a private one). */
const TLS_TRUST = /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_UNTRUSTED|CERT_SIGNATURE_FAILURE)$/;

/** Why a first connection failed, in words a person can act on (the relay's log and `relay status`). */
export function connectFailure(err: unknown, s: Pick<HubSettings, 'tlsCa'>): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : '';
  const msg = String(e?.message ?? err);
  if (TLS_TRUST.test(code)) {
    return `TLS refused: the hub's certificate is not trusted (${msg}, ${code}); ${s.tlsCa ? `it is not signed by the CA in ${s.tlsCa}` : 'pass --tls-ca with the CA that signed it'}`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `TLS refused: the hub's certificate is not for this address (${msg})`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `TLS refused: the hub's certificate is not valid now (${msg})`;
  if (/authorization|authentication|permissions/i.test(msg)) return `the hub refused the credentials (${msg})`;
  return `cannot connect to the hub: ${msg}${code && !msg.includes(code) ? ` (${code})` : ''}`;
}

/**
 * The first connection, tried every 500 ms until it is made (the connection) or the relay
 * stops (null, at once, even in the middle of an attempt). Each failure goes to `failed` with
 * its reason (connectFailure), so a refused certificate is said, not waited on in silence.
 */
export async function connectUntil(s: HubSettings, name: string, stopped: Promise<void>, failed: (reason: string) => void): Promise<NatsConnection | null> {
  let stop = false;
  const onStop = stopped.then(() => {
    stop = true;
    return null;
  });
  for (;;) {
    const attempt = connectHub(s, name, { waitOnFirstConnect: false });
    try {
      const nc = await Promise.race([attempt, onStop]);
      if (nc) return nc;
      // Stopped mid-attempt: a connection made after all is closed.
      void attempt.then((late) => late.close()).catch(() => {});
      return null;
    } catch (err) {
      failed(connectFailure(err, s));
    }
    await Promise.race([sleep(500), onStop]);
    if (stop) return null;
  }
}

/** A creds file: a NATS user JWT file, or the nkey seed file `attend relay hub-config` writes. */
export function authenticatorFrom(file: string): Authenticator {
  const text = readFileSync(file, 'utf8');
  if (text.includes('BEGIN NATS USER JWT')) return credsAuthenticator(new TextEncoder().encode(text));
  const seed = /^\s*(SU[A-Z2-7]{50,})\s*$/m.exec(text)?.[1];
  if (!seed) throw new Error(`${file} holds neither a user JWT nor an nkey user seed`);
  return nkeyAuthenticator(new TextEncoder().encode(seed));
}

/** How often a stream whose replicas differ from those wanted is asked to change (a refusal costs a timeout). */
const UPDATE_AGAIN_MS = 60_000;
/** JetStream keeps at most five copies of a stream. */
const MAX_REPLICAS = 5;

/**
 * How many copies of the stream and buckets a hub of this shape keeps: one on a lone server;
 * on a cluster (the server's INFO names one) the largest odd number up to five that its
 * servers can hold (connect_urls lists every server's client address, this one's included).
 * Odd, because an even count tolerates no more failures than the odd one below it.
 */
export function replicasFor(info: Pick<ServerInfo, 'cluster' | 'connect_urls'> | undefined, given = 1): number {
  if (!info?.cluster) return 1;
  // A cluster still forming lists fewer: the servers the relay was given count too.
  const n = Math.min(MAX_REPLICAS, Math.max(given, new Set(info.connect_urls ?? []).size));
  return n < 1 ? 1 : n % 2 === 1 ? n : n - 1;
}

/**
 * `make()` with `replicas` copies, or fewer when the hub has not the peers for that many yet
 * (a cluster still forming): the next check (HubRepair) raises them once it has.
 */
async function withReplicas<T>(replicas: number, make: (r: number) => Promise<T>): Promise<T> {
  for (let r = replicas; ; r -= 2) {
    try {
      return await make(Math.max(1, r));
    } catch (err) {
      if (r <= 1 || !isTooFewPeers(err)) throw err;
    }
  }
}

/**
 * The stream, created when missing (limits retention: kept for machines not connected yet),
 * and its replicas raised or lowered to `replicas` when they differ. `created` says it was made
 * here and now.
 */
export async function ensureStream(jsm: JetStreamManager, replicas = 1, mayUpdate: (stream: string) => boolean = () => true): Promise<{ info: StreamInfo; created: boolean }> {
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(STREAM_NAME);
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
    const made = await withReplicas(replicas, (r) =>
      jsm.streams.add({
        name: STREAM_NAME,
        subjects: [`${SUBJECT_PREFIX}.>`],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        max_age: nanos(STREAM_MAX_AGE_MS),
        duplicate_window: nanos(DAY_MS),
        max_msg_size: MAX_MSG_BYTES,
        deny_delete: true,
        deny_purge: true,
        num_replicas: r,
      }),
    );
    return { info: made, created: true };
  }
  const differs = (info.config.num_replicas || 1) !== replicas;
  return { info: differs && mayUpdate(STREAM_NAME) ? await matchReplicas(jsm, info, replicas) : info, created: false };
}

/**
 * A stream (ours, or a KV bucket's) with `replicas` copies: updated when it has another count.
 * A hub from `hub-config` does not let a host update streams (it could shorten what the hub
 * keeps), so there the stream keeps the count it was made with; `relay status` shows both.
 */
export async function matchReplicas(jsm: JetStreamManager, info: StreamInfo, replicas: number): Promise<StreamInfo> {
  if ((info.config.num_replicas || 1) === replicas) return info;
  try {
    return await withReplicas(replicas, (r) => ((info.config.num_replicas || 1) === r ? Promise.resolve(info) : jsm.streams.update(info.config.name, { num_replicas: r })));
  } catch {
    // Not now (a node away, a hub that refuses the update): the stream works as it is, and
    // the next check tries again.
    return info;
  }
}

/** This host's durable pull consumers (subjects.ts consumerFilters), created when missing. */
export async function ensureConsumers(jsm: JetStreamManager, host: string): Promise<void> {
  for (const { suffix, filter } of consumerFilters(host)) {
    const name = durableName(host, suffix);
    try {
      await jsm.consumers.info(STREAM_NAME, name);
      continue;
    } catch (err) {
      if (!isConsumerNotFound(err)) throw err;
    }
    await jsm.consumers.add(STREAM_NAME, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: filter,
      ack_wait: nanos(5_000),
      max_ack_pending: 4096,
    });
  }
}

/**
 * Whether a tick of HubRepair.every (one every `ms`) checks the hub: always while something
 * is off (`calm` false), otherwise once `restMs` passed since the last check (less half a
 * tick, so timer jitter does not push it a whole tick later).
 */
export function checkDue(sinceLastMs: number, calm: boolean, ms: number, restMs: number): boolean {
  return !calm || sinceLastMs >= restMs - ms / 2;
}

/** What the last check of the hub found (`attend relay status`). */
export interface HubView {
  /** The cluster's name, or null on a lone server. */
  cluster: string | null;
  /** Copies of the stream the hub keeps. */
  replicas: number;
  /** Copies this relay would have it keep (the cluster's size, hub.ts replicasFor). */
  wanted: number;
  /** The server that leads the stream (null on a lone server, or while there is none). */
  leader: string | null;
  /** Of the stream's replicas, how many are up to date (the leader counted). */
  current: number;
  /** Why the last check failed (no quorum, refused, away), or null when it did not. */
  problem: string | null;
  /** What kind of failure `problem` is. */
  problemKind: 'no-quorum' | 'refused' | 'away' | null;
  checkedAt: number;
}

interface RepairHooks {
  /** Copies wanted now (hub.ts replicasFor over the server's INFO). */
  replicas?(): number;
  /** The KV buckets whose replicas follow the stream's, and whose loss is noticed here. */
  buckets?: string[];
  /** The stream's creation stamp when this bus last saw it (relay/cursor.json). */
  known?: string | undefined;
  /** The stream is not the one last seen (none seen yet, or the hub lost its store: re-offer, republish). */
  onNewStream?(created: string): void;
  /** A bucket is missing: its owner makes it again and puts this machine's entries again. */
  onBucketsLost?(): void;
  onView?(view: HubView): void;
  now?(): number;
}

/**
 * The stream, this host's consumers and the buckets' replicas: made at start (`ensure`), and
 * checked again whenever a call says something is missing, the connection came back, or every
 * few seconds (`repair`, `every`), one check at a time. A check notices a hub that lost its
 * store (a stream with another creation stamp, a bucket gone) and tells the hooks.
 */
export class HubRepair {
  private repairing = false;
  private known: string | undefined;
  private timer: NodeJS.Timeout | null = null;
  /** When each stream's replicas were last asked to change: a refusal is not asked again at every check. */
  private readonly updated = new Map<string, number>();
  /**
   * Each bucket's creation stamp as last seen: another one means it was lost and made again
   * (by another machine's relay, or a put here) between two checks, with this machine's
   * entries gone with it.
   */
  private readonly bucketStamps = new Map<string, string>();

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly host: string,
    private readonly stopping: () => boolean,
    private readonly hooks: RepairHooks = {},
  ) {
    this.known = hooks.known;
  }

  /** Retries until the stream and consumers exist (true) or the relay stops first (false). */
  async ensure(): Promise<boolean> {
    const done = await retry(async () => {
      try {
        await this.check();
      } catch (err) {
        this.report(null, err);
        throw err;
      }
      return true;
    }, this.stopping);
    return done === true;
  }

  private async check(): Promise<void> {
    const replicas = this.hooks.replicas?.() ?? 1;
    const now = this.hooks.now?.() ?? Date.now();
    const may = (stream: string) => {
      if (now - (this.updated.get(stream) ?? -Infinity) < UPDATE_AGAIN_MS) return false;
      this.updated.set(stream, now);
      return true;
    };
    const { info } = await ensureStream(this.jsm, replicas, (s) => may(s));
    await ensureConsumers(this.jsm, this.host);
    let lost = false;
    for (const b of this.hooks.buckets ?? []) {
      try {
        const bi = await this.jsm.streams.info(`KV_${b}`);
        const was = this.bucketStamps.get(b);
        if (was !== undefined && was !== bi.created) lost = true;
        this.bucketStamps.set(b, bi.created);
        if ((bi.config.num_replicas || 1) !== (info.config.num_replicas || 1) && may(bi.config.name)) await matchReplicas(this.jsm, bi, info.config.num_replicas || 1);
      } catch (err) {
        if (!isStreamNotFound(err)) throw err;
        this.bucketStamps.delete(b);
        lost = true;
      }
    }
    const created = info.created;
    if (created !== this.known) this.hooks.onNewStream?.(created);
    this.known = created;
    if (lost) this.hooks.onBucketsLost?.();
    this.report(info, null, replicas);
  }

  private view: HubView | null = null;

  private report(info: StreamInfo | null, err: unknown, wanted = this.view?.wanted ?? 1): void {
    const at = this.hooks.now?.() ?? Date.now();
    if (info) {
      const peers = info.cluster?.replicas ?? [];
      const leader = info.cluster?.leader ?? null;
      this.show({
        cluster: info.cluster?.name ?? null,
        replicas: info.config.num_replicas || 1,
        wanted,
        leader,
        current: (leader ? 1 : info.cluster ? 0 : 1) + peers.filter((p) => p.current).length,
        problem: null,
        problemKind: null,
        checkedAt: at,
      });
      return;
    }
    const last = this.view ?? { cluster: null, replicas: 1, leader: null, current: 0 };
    // A cluster that lost its quorum often does not answer at all: on a cluster, a check that
    // times out while connected is counted as no quorum too.
    const kind = isNoQuorum(err) || (last.replicas > 1 && isTimeout(err)) ? 'no-quorum' : isRefused(err) ? 'refused' : 'away';
    this.show({ cluster: last.cluster, replicas: last.replicas, wanted, leader: kind === 'no-quorum' ? null : last.leader, current: kind === 'no-quorum' ? 0 : last.current, problem: String((err as Error)?.message ?? err), problemKind: kind, checkedAt: at });
  }

  private show(v: HubView): void {
    this.view = v;
    this.hooks.onView?.(v);
  }

  /** Start a repair in the background; one already under way absorbs the request. */
  repair(): void {
    if (this.repairing) return;
    this.repairing = true;
    void this.ensure().finally(() => {
      this.repairing = false;
    });
  }

  /**
   * A check every `ms` while something is off or `urgent()` (the last check failed, the
   * stream has no leader, a replica behind or too few, messages waiting to be published), and
   * every `restMs` while all is well (checkDue). A hub that loses something under a live
   * connection is noticed sooner by the call that meets it (a publish, a consumer, a presence
   * put asks for a repair); the slow check is the net under those, and what keeps `relay
   * status` naming the leader. The tick itself asks the hub nothing.
   */
  every(ms: number, restMs = ms, urgent: () => boolean = () => false): void {
    this.timer = setInterval(() => {
      const now = this.hooks.now?.() ?? Date.now();
      if (checkDue(now - (this.view?.checkedAt ?? -Infinity), this.healthy() && !urgent(), ms, restMs)) this.repair();
    }, ms);
    this.timer.unref();
  }

  /** The last check found the stream whole: led, every replica current, as many as wanted. */
  private healthy(): boolean {
    const v = this.view;
    if (!v || v.problem !== null || v.replicas !== v.wanted) return false;
    return v.cluster === null || (v.leader !== null && v.current === v.replicas);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  get busy(): boolean {
    return this.repairing;
  }
}

/** What the relay does when the connection to the hub goes and comes back. */
interface ConnectionEvents {
  disconnect(): void;
  reconnect(): void;
  /** After every status event, those two included (the relay rewrites its status file). */
  after(): void;
}

/** Follow the connection's status events until it closes. */
export function watchConnection(nc: NatsConnection, on: ConnectionEvents): void {
  void (async () => {
    for await (const s of nc.status()) {
      // A ping (every pingInterval, and the client reports each) changes nothing the status
      // shows: at rest it would rewrite the status file every few seconds for nothing.
      if (s.type === 'ping') continue;
      if (s.type === 'disconnect') on.disconnect();
      else if (s.type === 'reconnect') on.reconnect();
      on.after();
    }
  })();
}

/** `fn` until it resolves, every 500 ms; null once `stop` says so after a failure. */
export async function retry<T>(fn: () => Promise<T>, stop: () => boolean): Promise<T | null> {
  for (;;) {
    try {
      return await fn();
    } catch {
      if (stop()) return null;
      await sleep(500);
    }
  }
}
