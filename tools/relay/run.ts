// `attend relay`: the long-running bridge between this machine's bus and the hub. The only
// module that speaks NATS (with hub-config.ts); the CLI loads it lazily.
//
//   outbound  local files --(Outbox.scan)--> js.publish(subject, bytes, msgID) --ack--> cursor
//   inbound   durable pull consumers --> importMessage (write or park) --> ack
//
// The filesystem stays the record: a hub that is down only delays; the relay retries
// publishes until acked, and the consumers resume from the hub's durable state.

import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { join } from 'node:path';
import { type Authenticator, connect, credsAuthenticator, headers, nanos, nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JetStreamManager, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { signalsDir } from '../bus/store/index.js';
import { type RemoteMember, remoteHostOf } from '../bus/presence/index.js';
import { ensureRoot } from '../bus/store/index.js';
import type { RelaySettings } from './config.js';
import { Outbox, type Pending } from './outbound.js';
import { ImportedSet, type RelayStatus, listParked, park, readCursor, writeCursor, writeCursorAsync, writeStatus } from './store.js';
import { STREAM_NAME, SUBJECT_PREFIX, consumerFilters, durableName, parseSubject } from './subjects.js';
import { Presence } from './presence.js';
import { Importer } from './importer.js';
import { SharedState } from './state.js';
import { Publisher, pubHeaders } from './publish.js';
import { localizeId } from '../wire/hosts.js';
import { isConsumerNotFound, isMissingOnHub, isStreamNotFound, isStreamOrConsumerNotFound, isTooLarge } from './nats-errors.js';

export const MAX_MSG_BYTES = 128 * 1024;
const DAY_MS = 24 * 3600_000;

export interface RelayDeps {
  root: string;
  settings: RelaySettings & { servers: string[] };
  now(): number;
  log(line: string): void;
  /** Resolves when the relay should stop (SIGTERM, SIGINT). */
  stopped: Promise<void>;
  /** Presence: this machine's live roster (tools/bus/presence/roster.ts listLive, mapped). */
  localMembers(): RemoteMember[];
  /** Seconds a host's roster stays without a refresh (KV bucket TTL). */
  presenceTtlS?: number;
  /** Log each published chunk, imported batch and event-loop stall (ATTEND_RELAY_TRACE=1, read by the CLI). */
  trace?: boolean;
}

export async function connectHub(s: RelayDeps['settings'], name: string): Promise<NatsConnection> {
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

async function ensureConsumers(jsm: JetStreamManager, host: string): Promise<void> {
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

const BATCH = 512;

export async function runRelay(deps: RelayDeps): Promise<void> {
  const { root, settings } = deps;
  const host = settings.host;
  ensureRoot(root);
  const imported = new ImportedSet(root);
  const cursor = readCursor(root) ?? { since: deps.now(), dirs: {} };
  writeCursor(root, cursor);
  // Who is where: remote members from presence, and senders of imported messages.
  const senders = new Map<string, string>();
  const hostOf = (id: string): string | undefined => {
    return senders.get(id) ?? remoteHostOf(root, id);
  };
  const outbox = new Outbox(root, host, imported, cursor, hostOf);
  const status: RelayStatus = {
    pid: process.pid,
    host,
    hub: settings.servers.join(','),
    connected: false,
    startedAt: deps.now(),
    updatedAt: deps.now(),
    lastContact: null,
    outboundBacklog: 0,
    inboundBacklog: null,
    published: 0,
    imported: 0,
    duplicates: 0,
    parked: listParked(root).length,
  };
  /** Local messages found while the hub is away, kept for the reconnect. */
  let waiting = 0;
  // Rewritten at most twice a second while something changes, every 3 s at rest (status
  // readers judge liveness over 10 s), and at once when the connection changes.
  let lastSaved = 0;
  let lastShape = '';
  const saveStatus = (force = false) => {
    const now = deps.now();
    if (!force && now - lastSaved < 500) return;
    status.outboundBacklog = Math.max(outbox.inflightCount, waiting);
    const { updatedAt: _u, lastContact: _c, ...rest } = status;
    const shape = JSON.stringify(rest);
    if (!force && shape === lastShape && now - lastSaved < 3_000) return;
    lastShape = shape;
    lastSaved = now;
    status.updatedAt = now;
    try {
      writeStatus(root, status);
    } catch {
      // the bus is unusable for a moment: next tick
    }
  };
  saveStatus();

  let stopping = false;
  void deps.stopped.then(() => {
    stopping = true;
    wake();
  });

  // Wake the outbound loop as soon as a directory changes; a slow poll covers missed events.
  // A change seen while the loop is busy sets `dirty`, so the next wait returns at once.
  let wakeResolve: (() => void) | null = null;
  let dirty = false;
  const wake = () => {
    dirty = true;
    const r = wakeResolve;
    wakeResolve = null;
    r?.();
  };
  const watchers = new Map<string, FSWatcher>();
  const watchDir = (dir: string) => {
    if (watchers.has(dir)) return;
    try {
      // Temporaries and the index hint are dot-files; a new message is `<id>.signal` and a
      // new directory its own name. Only those are worth a scan.
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || !String(name).startsWith('.')) wake();
      });
      w.on('error', () => {
        watchers.delete(dir);
        w.close();
      });
      watchers.set(dir, w);
    } catch {
      // not there yet
    }
  };

  const nc = await connectHub(settings, `attend-relay-${host}`);
  if (stopping) {
    await nc.close();
    return;
  }
  deps.log(`attend relay: ${host} connected to ${nc.getServer()}`);
  status.connected = true;
  status.lastContact = deps.now();
  saveStatus(true);
  let restartConsumers = () => {};
  // A hub that lost its store (disk loss, a new server) has no stream and no consumers:
  // make them again after every reconnect and whenever a call says they are missing.
  let repair = (): void => {};
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        status.connected = false;
        deps.log(`attend relay: disconnected from the hub`);
      } else if (s.type === 'reconnect') {
        repair();
        restartConsumers();
        status.connected = true;
        status.lastContact = deps.now();
        deps.log(`attend relay: reconnected to ${nc.getServer()}`);
        wake();
      }
      saveStatus(true);
    }
  })();

  const jsm = await retry(() => jetstreamManager(nc), () => stopping);
  if (!jsm) return void (await nc.close());
  if (!(await retry(async () => { await ensureStream(jsm); await ensureConsumers(jsm, host); return true; }, () => stopping))) return void (await nc.close());
  let repairing = false;
  repair = () => {
    if (repairing) return;
    repairing = true;
    void retry(async () => {
      await ensureStream(jsm);
      await ensureConsumers(jsm, host);
      return true;
    }, () => stopping).finally(() => {
      repairing = false;
    });
  };
  const js = jetstream(nc);
  const pub = new Publisher(nc, `_INBOX_${host}`);
  status.ready = true;
  saveStatus(true);

  // Inbound: one consume loop per consumer.
  const trace = deps.trace === true;
  if (trace) {
    let last = Date.now();
    setInterval(() => {
      const now = Date.now();
      if (now - last > 100) deps.log(`trace: event loop stalled ${now - last}ms`);
      last = now;
    }, 10).unref();
  }
  const state = new SharedState(nc, host, root, () => new Map(deps.localMembers().map((m) => [m.id, m.name])), (line) => deps.log(line));
  const stateReady = state.start(() => stopping);
  const importer = new Importer({
    root,
    self: host,
    imported,
    now: deps.now,
    state,
    trace: trace ? (line) => deps.log(line) : null,
    onResult: (m, out, fromId) => {
      if (out === 'written') {
        status.imported++;
        const route = parseSubject(m.subject);
        // As this machine names the sender: a username elsewhere is `host:name`, never ours.
        if (route && fromId) senders.set(localizeId(fromId, route.origin, host), route.origin);
      } else if (out === 'duplicate') status.duplicates++;
      else if (typeof out === 'object') {
        status.parked++;
        deps.log(`attend relay: parked ${m.subject}: ${out.reason}`);
      }
      status.lastContact = deps.now();
    },
    onError: (err) => {
      // The bus refused the write (disk full, permissions): nothing of the batch is acked.
      status.lastError = `import: ${err.message}`;
    },
  });
  // After a reconnect the pull requests the old server held are gone: start them over at
  // once rather than waiting for missed heartbeats.
  const iterators = new Set<{ stop(): void }>();
  restartConsumers = () => {
    for (const it of iterators) it.stop();
  };
  const loops = consumerFilters(host).map(({ suffix }) =>
    (async () => {
      // Channel state and keys first: a message for a channel dissolved elsewhere, or signed
      // by a key published elsewhere, is judged against them.
      await stateReady;
      while (!stopping) {
        try {
          const c = await js.consumers.get(STREAM_NAME, durableName(host, suffix));
          // expires 2 s: a hub that died is noticed within two missed heartbeats (1 s each).
          const iter = await c.consume({ max_messages: 1024, expires: 2_000 });
          const stop = deps.stopped.then(() => iter.stop());
          iterators.add(iter);
          for await (const m of iter) importer.add(m);
          void stop;
          iterators.delete(iter);
          // An iterator that ends at once (the connection is away) must not turn this into a
          // loop of resolved promises that starves the timers the reconnect needs.
          if (!stopping) await delay(250);
        } catch (err) {
          if (stopping) break;
          status.lastError = `consume ${suffix}: ${(err as Error).message}`;
          if (isStreamOrConsumerNotFound(err)) repair();
          await delay(500);
        }
      }
    })(),
  );

  const presence = new Presence(nc, host, deps.presenceTtlS ?? 30, root, deps.now, deps.localMembers, (line) => deps.log(line));
  void presence.start(() => stopping);

  // Backlog in: the consumers' pending counts, now and then.
  let lastInfo = 0;
  const refreshInbound = async () => {
    if (deps.now() - lastInfo < 2_000) return;
    lastInfo = deps.now();
    try {
      let n = 0;
      for (const { suffix } of consumerFilters(host)) {
        const ci = await jsm.consumers.info(STREAM_NAME, durableName(host, suffix));
        n += ci.num_pending + ci.num_ack_pending;
      }
      status.inboundBacklog = n;
      status.lastContact = deps.now();
    } catch {
      // the hub is away: keep the last figure
    }
  };

  // Outbound loop.
  // During a burst the cursor is written every 2 s (each write is synced, and a restart looks
  // back far more than that anyway); it is written at once whenever the outbox is idle.
  let lastCursor = 0;
  let lastPrune = 0;
  let cursorWrite: Promise<void> | null = null;
  const saveCursor = (force: boolean) => {
    if (cursorWrite || !outbox.cursorChanged || (!force && deps.now() - lastCursor < 2_000)) return;
    outbox.cursorChanged = false;
    lastCursor = deps.now();
    cursorWrite = writeCursorAsync(root, structuredClone(outbox.cursor))
      .catch((err: Error) => {
        // Not recorded: a restart looks back further, and the hub absorbs what it sees twice.
        outbox.cursorChanged = true;
        status.lastError = `cursor: ${err.message}`;
      })
      .finally(() => {
        cursorWrite = null;
      });
  };
  while (!stopping) {
    // Every round yields to I/O and timers: a round made only of resolved promises (the
    // hub away, publishes failing at once) must never starve the client's reconnect.
    await new Promise((r) => setImmediate(r));
    dirty = false;
    watchDir(signalsDir(root));
    const pending = outbox.scan(deps.now());
    for (const d of outbox.dirNames) watchDir(join(signalsDir(root), d));
    if (pending.length > 0 && !status.connected) {
      // The hub is away: publishing now only waits for timeouts. Keep them for the reconnect
      // (which wakes this loop); the local bus goes on as ever.
      for (const p of pending) outbox.retry(p);
      waiting = new Set(pending.map((p) => `${p.dir}/${p.id}`)).size;
      saveStatus();
      await new Promise<void>((r) => {
        wakeResolve = r;
        setTimeout(() => wake(), 1_000).unref();
      });
      continue;
    }
    waiting = 0;
    if (pending.length > 0) {
      for (let i = 0; i < pending.length && !stopping; i += BATCH) {
        const chunk = pending.slice(i, i + BATCH);
        const t0 = Date.now();
        const { missing } = await publishChunk(pub, chunk, host, outbox, status, root, deps, state);
        if (missing) repair();
        if (trace) deps.log(`trace: published ${chunk.length} in ${Date.now() - t0}ms${status.lastError ? ` (last error: ${status.lastError})` : ''}`);
        saveStatus();
      }
      saveCursor(false);
      if (deps.now() - lastPrune > 5_000) {
        outbox.prune();
        lastPrune = deps.now();
      }
      continue;
    }
    saveCursor(true);
    await refreshInbound();
    saveStatus();
    if (stopping) continue;
    if (!dirty) {
      await new Promise<void>((r) => {
        wakeResolve = r;
        // The 1 s poll, or sooner when a directory is due for a full listing.
        const t = setTimeout(() => wake(), Math.max(5, Math.min(1_000, outbox.recheckAt - deps.now() + 1)));
        t.unref();
      });
    }
    // Let a burst of file events settle into one scan: each write raises several, and a
    // scan per message would cost more than the messages.
    await delay(3);
  }
  for (const w of watchers.values()) w.close();
  await cursorWrite;
  writeCursor(root, outbox.cursor);
  saveStatus(true);
  await presence.stop();
  await state.stop();
  await importer.idle();
  try {
    await nc.drain();
  } catch {
    await nc.close();
  }
  await Promise.race([Promise.allSettled(loops), delay(2_000)]);
  status.connected = false;
  saveStatus(true);
}


/** `missing`: a publish found no stream on the hub (it lost its store), so it wants repair. */
async function publishChunk(pub: Publisher, chunk: Pending[], host: string, outbox: Outbox, status: RelayStatus, root: string, deps: RelayDeps, state: SharedState): Promise<{ missing: boolean }> {
  // Every signer's key is on the hub before its messages are: a receiver that meets a key it
  // does not know asks the hub for it (tools/relay/state.ts).
  try {
    const signers = new Map(chunk.flatMap((p) => (p.signer ? [[p.signer.keyId, p.signer] as const] : [])));
    for (const s of signers.values()) await state.ensureKey(s.node, s.keyId);
  } catch (err) {
    for (const p of new Map(chunk.map((p) => [`${p.dir}/${p.id}`, p])).values()) outbox.retry(p);
    status.lastError = `publish keys: ${(err as Error).message}`;
    await delay(250);
    return { missing: false };
  }
  const byMsg = new Map<string, { p: Pending; left: number; failed: boolean }>();
  for (const p of chunk) {
    const k = `${p.dir}/${p.id}`;
    const e = byMsg.get(k);
    if (e) e.left++;
    else byMsg.set(k, { p, left: 1, failed: false });
  }
  const results = await pub.publishAll(
    chunk.map((p) => ({ subject: p.subject, data: p.data, headers: pubHeaders(p, host) })),
    2_000,
  );
  let failure: string | undefined;
  let missing = false;
  results.forEach((r, i) => {
    const p = chunk[i]!;
    const e = byMsg.get(`${p.dir}/${p.id}`)!;
    if (r.status === 'fulfilled') {
      e.left--;
      if (!r.value.duplicate) status.published++;
      return;
    }
    const msg = String((r.reason as Error)?.message ?? r.reason);
    if (isTooLarge(r.reason)) {
      // The hub will never take it: keep a record and move on (the local file stays).
      park(root, { at: deps.now(), kind: 'outbound', reason: `the hub refused it: ${msg}`, subject: p.subject, id: p.id, origin: host });
      status.parked++;
      e.left--;
      return;
    }
    e.failed = true;
    failure = msg;
    if (isMissingOnHub(r.reason)) missing = true;
  });
  for (const e of byMsg.values()) {
    if (e.failed || e.left > 0) outbox.retry(e.p);
    else outbox.done(e.p);
  }
  if (failure) {
    status.lastError = `publish: ${failure}`;
    await delay(250);
  } else status.lastContact = deps.now();
  return { missing };
}

async function retry<T>(fn: () => Promise<T>, stop: () => boolean): Promise<T | null> {
  for (;;) {
    try {
      return await fn();
    } catch {
      if (stop()) return null;
      await delay(500);
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
