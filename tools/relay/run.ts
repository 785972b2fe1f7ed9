// `attend relay`: the long-running bridge between this machine's bus and the hub; the CLI
// loads it lazily (main.ts relayRun). This module only wires the loops together:
//
//   hub.ts            connect, ensure the stream and consumers, repair, connection events
//   outbound-loop.ts  local files --(Outbox.scan)--> publish --ack--> cursor
//   inbound-loop.ts   durable pull consumers --> Importer (write or park) --> ack
//   presence.ts       this machine's roster out, the others' into relay/remote.json
//   state.ts          channel views and public keys, both ways
//   status-board.ts   relay/status.json
//
// The filesystem stays the record: a hub that is down only delays; the relay retries
// publishes until acked, and the consumers resume from the hub's durable state.

import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type RemoteMember, remoteHostOf } from '../bus/presence/index.js';
import { ensureRoot } from '../bus/store/index.js';
import { HubRepair, type HubSettings, STREAM_MAX_AGE_MS, connectUntil, replicasFor, retry, watchConnection } from './hub.js';
import { Importer } from './importer.js';
import { CONSUMER_ASK_TIMEOUT_MS, InboundBacklog, InboundLoops, importOutcomes } from './inbound-loop.js';
import { Outbox } from './outbound.js';
import { OutboundLoop } from './outbound-loop.js';
import { OwnWrites } from './own-writes.js';
import { PRESENCE_BUCKET, Presence } from './presence.js';
import { Publisher } from './publish.js';
import { STATE_BUCKET, SharedState } from './state.js';
import { StatusBoard } from './status-board.js';
import { ImportedSet, listParked, readCursor, writeCursor } from './store.js';
import { watchStalls } from './trace.js';

interface RelayDeps {
  root: string;
  keysDir: string;
  settings: HubSettings;
  now(): number;
  log(line: string): void;
  /** Resolves when the relay should stop (SIGTERM, SIGINT). */
  stopped: Promise<void>;
  /** Presence: this machine's live roster (tools/bus/presence/roster.ts listLive, mapped). */
  localMembers(): RemoteMember[];
  /** The directories that roster is read from (session records, presence), watched for changes. */
  rosterDirs?: string[];
  /** Seconds a host's roster stays without a refresh (KV bucket TTL). */
  presenceTtlS?: number;
  /** Log each published chunk, imported batch and event-loop stall (ATTEND_RELAY_TRACE=1, read by the CLI). */
  trace?: boolean;
}

/** How often the relay checks the hub (its stream, consumers and buckets, the leader, replicas) while something is off… */
const HUB_CHECK_MS = 5_000;
/** …and while all is well (hub.ts HubRepair.every): six requests, the better part of an idle relay's work. */
const HUB_REST_MS = 30_000;

/** How long one step of stopping may wait for the hub (a goodbye, a drain) before it is skipped. */
const STOP_STEP_MS = 1_500;

/** `p`'s value, or null once `ms` passed or it failed: what it did not finish, the next start redoes. */
async function bounded<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.catch(() => null), new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export async function runRelay(deps: RelayDeps): Promise<void> {
  const { root, settings, now } = deps;
  const host = settings.host;
  const log = (line: string) => deps.log(line);
  ensureRoot(root);
  const imported = new ImportedSet(root);
  const cursor = readCursor(root) ?? { since: now(), dirs: {} };
  writeCursor(root, cursor);
  // Who is where: remote members from presence, and senders of imported messages.
  const senders = new Map<string, string>();
  const outbox = new Outbox(root, host, imported, cursor, (id) => senders.get(id) ?? remoteHostOf(root, id));
  const own = new OwnWrites(imported);
  const outbound = new OutboundLoop({ root, host, now, outbox, own });
  const board = new StatusBoard(root, now, { pid: process.pid, host, hub: settings.servers.join(','), parked: listParked(root).length }, () => outbound.backlog, () => outbound.backlogSince);
  const { status } = board;
  board.save();

  let stopping = false;
  const isStopping = () => stopping;
  void deps.stopped.then(() => {
    stopping = true;
    outbound.wake.wake();
  });

  // The first connection: each new reason it fails is logged and shown in status at once.
  let lastFailure = '';
  // An attempt may hang (a host that drops packets): status stays fresh meanwhile.
  const keepFresh = setInterval(() => board.save(), 1_000);
  const nc = await connectUntil(settings, `attend-relay-${host}`, deps.stopped, (reason) => {
    status.lastError = reason;
    outbound.countWhileAway();
    board.save(reason !== lastFailure);
    if (reason !== lastFailure) log(`attend relay: ${reason}`);
    lastFailure = reason;
  });
  clearInterval(keepFresh);
  if (!nc || stopping) {
    await nc?.close();
    board.save(true);
    return;
  }
  log(`attend relay: ${host} connected to ${nc.getServer()}`);
  status.connected = true;
  status.lastContact = now();
  if (lastFailure) delete status.lastError;
  board.save(true);
  // Set once each exists: a reconnect before then has nothing to repair or restart.
  let hub: HubRepair | null = null;
  const restarts: { restart(): void }[] = [];
  watchConnection(nc, {
    disconnect: () => {
      status.connected = false;
      log(`attend relay: disconnected from the hub`);
    },
    reconnect: () => {
      // A hub that lost its store (disk loss, a new server) has no stream and no consumers.
      hub?.repair();
      // The consume loops' pull requests and the buckets' watches died with the old server.
      for (const r of restarts) r.restart();
      status.connected = true;
      status.lastContact = now();
      log(`attend relay: reconnected to ${nc.getServer()}`);
      outbound.wake.wake();
    },
    after: () => board.save(true),
  });

  const jsm = await retry(() => jetstreamManager(nc), isStopping);
  if (!jsm) return void (await nc.close());
  // Set once each has started: a hub that lost its store before then is handled by their start.
  let presence: Presence | null = null;
  let state: SharedState | null = null;
  const replicas = () => replicasFor(nc.info, settings.servers.length);
  const repair = new HubRepair(jsm, host, isStopping, {
    replicas,
    buckets: [PRESENCE_BUCKET, STATE_BUCKET],
    known: cursor.hubStream,
    now,
    onNewStream: (created) => {
      // The hub lost its store (a wiped disk, a new server): the local bus is the record, so
      // everything it may have held is offered again, and this machine's entries put again.
      if (outbox.cursor.hubStream !== undefined) {
        log(`attend relay: the hub's stream is new (it lost its store): offering local messages again, republishing presence, keys and channels`);
        outbox.rewind(Math.max(outbox.cursor.since, now() - STREAM_MAX_AGE_MS));
        void presence?.lost();
        void state?.lost();
      }
      outbox.cursor.hubStream = created;
      outbox.cursorChanged = true;
      outbound.wake.wake();
    },
    onBucketsLost: () => {
      void presence?.lost();
      void state?.lost();
    },
    onView: (v) => {
      const before = status.hubView;
      status.hubView = v;
      if (before?.leader !== v.leader || before?.problemKind !== v.problemKind || before?.replicas !== v.replicas) board.save(true);
    },
  });
  if (!(await repair.ensure())) return void (await nc.close());
  // Messages waiting, or the connection away: something may be off that the last check did not see.
  repair.every(HUB_CHECK_MS, HUB_REST_MS, () => outbound.backlog > 0 || !status.connected);
  hub = repair;
  const pub = new Publisher(nc, `_INBOX_${host}`);
  status.ready = true;
  board.save(true);
  // The outbound loop sleeps up to 10 s at rest: the board keeps status.json fresh itself.
  board.keepFresh();

  const trace = deps.trace === true ? log : null;
  const stopStalls = trace ? watchStalls(trace) : () => {};
  state = new SharedState(nc, host, root, deps.keysDir, () => new Map(deps.localMembers().map((m) => [m.id, m.name])), log, replicas, () => repair.repair());
  const stateReady = state.start(isStopping);
  const importer = new Importer({ root, self: host, imported, now, state, trace, own, ...importOutcomes({ root, status, senders, host, now, log }) });
  const inbound = new InboundLoops({ js: jetstream(nc, { timeout: CONSUMER_ASK_TIMEOUT_MS }), host, importer, status, repair: () => repair.repair(), ready: stateReady, stopping: isStopping, stopped: deps.stopped, clustered: () => Boolean(nc.info?.cluster) });
  const loops = inbound.start();

  presence = new Presence(nc, host, deps.presenceTtlS ?? 30, root, now, deps.localMembers, log, replicas, deps.rosterDirs, () => repair.repair());
  void presence.start(isStopping);
  restarts.push(inbound, presence, state);

  const backlog = new InboundBacklog(jsm, host, status, now);
  await outbound.run({ pub, keys: state, board, repair: () => repair.repair(), idle: () => backlog.refresh(), trace, stopping: isStopping });

  // Stopping: the outbound loop wrote the cursor; the rest, in order, then the connection.
  // Each step is bounded: a hub that is away (reconnecting) must not hold a stop.
  board.save(true);
  board.stopFresh();
  repair.close();
  // Away from the hub, a goodbye or a drain could only time out: the presence key ages out.
  const away = !status.connected;
  const step = away ? 0 : STOP_STEP_MS;
  await bounded(presence.stop(), step);
  await bounded(state.stop(), step);
  await importer.idle();
  if (away || !(await bounded(nc.drain().then(() => true), step))) await nc.close().catch(() => {});
  await Promise.race([Promise.allSettled(loops), sleep(away ? 250 : 2_000)]);
  stopStalls();
  status.connected = false;
  board.save(true);
}
