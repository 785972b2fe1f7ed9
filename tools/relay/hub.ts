// The hub: connect to it, make the stream and this host's durable consumers when they are
// missing, and make them again whenever it lost them (a hub that lost its store, a new
// server: docs/cross-machine.md, "Failure semantics"). `attend relay` (run.ts) and
// `attend relay resync` (resync.ts) both start here.

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Authenticator, connect, credsAuthenticator, nanos, nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JetStreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { RelaySettings } from './config.js';
import { isConsumerNotFound, isStreamNotFound } from './nats-errors.js';
import { STREAM_NAME, SUBJECT_PREFIX, consumerFilters, durableName } from './subjects.js';

export const MAX_MSG_BYTES = 128 * 1024;
const DAY_MS = 24 * 3600_000;

export type HubSettings = RelaySettings & { servers: string[] };

export async function connectHub(s: HubSettings, name: string): Promise<NatsConnection> {
  return connect({
    servers: s.servers,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    pingInterval: 5_000,
    inboxPrefix: `_INBOX_${s.host}`,
    ...(s.creds ? { authenticator: authenticatorFrom(s.creds) } : {}),
    ...(s.tlsCa ? { tls: { caFile: s.tlsCa } } : {}),
  });
}

/** A creds file: a NATS user JWT file, or the nkey seed file `attend relay hub-config` writes. */
export function authenticatorFrom(file: string): Authenticator {
  const text = readFileSync(file, 'utf8');
  if (text.includes('BEGIN NATS USER JWT')) return credsAuthenticator(new TextEncoder().encode(text));
  const seed = /^\s*(SU[A-Z2-7]{50,})\s*$/m.exec(text)?.[1];
  if (!seed) throw new Error(`${file} holds neither a user JWT nor an nkey user seed`);
  return nkeyAuthenticator(new TextEncoder().encode(seed));
}

/** The stream, created when missing (limits retention: kept for machines not connected yet). */
export async function ensureStream(jsm: JetStreamManager): Promise<void> {
  try {
    await jsm.streams.info(STREAM_NAME);
    return;
  } catch (err) {
    if (!isStreamNotFound(err)) throw err;
  }
  await jsm.streams.add({
    name: STREAM_NAME,
    subjects: [`${SUBJECT_PREFIX}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: nanos(30 * DAY_MS),
    duplicate_window: nanos(DAY_MS),
    max_msg_size: MAX_MSG_BYTES,
    deny_delete: true,
    deny_purge: true,
  });
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
 * The stream and this host's consumers: made at start (`ensure`), and again whenever a call
 * says they are missing or the connection came back (`repair`), one repair at a time.
 */
export class HubRepair {
  private repairing = false;

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly host: string,
    private readonly stopping: () => boolean,
  ) {}

  /** Retries until the stream and consumers exist (true) or the relay stops first (false). */
  async ensure(): Promise<boolean> {
    const done = await retry(async () => {
      await ensureStream(this.jsm);
      await ensureConsumers(this.jsm, this.host);
      return true;
    }, this.stopping);
    return done === true;
  }

  /** Start a repair in the background; one already under way absorbs the request. */
  repair(): void {
    if (this.repairing) return;
    this.repairing = true;
    void this.ensure().finally(() => {
      this.repairing = false;
    });
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
