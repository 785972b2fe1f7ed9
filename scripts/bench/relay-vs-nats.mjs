// The relay next to raw NATS on the same run (issue 25, Performance): one nats-server on
// loopback, two bus roots with an `attend relay` each. Latency: a broadcast written on A,
// until its file is in B's #open; against a core NATS publish → a
// subscriber, and a JetStream publish → a consumer, one at a time on the same server. Backlog:
// 1,000 broadcasts written on A while its relay is stopped, timed from the relay's start
// until B holds all; against 1,000 JetStream publishes, then one consumer reading them all.
// Burst: one writer's broadcasts as fast as the bus takes them, the rate that crosses against
// the rate the writer's bus accepted. At rest: ten relays on one hub, CPU over 10 s, against a
// node process holding an idle NATS connection. Failover: a 3-node cluster, the stream's
// leader SIGKILLed while A writes every 20 ms, until a message written after the kill is on B
// (and every one written arrived once); against a raw JetStream publisher and consumer on an
// R3 stream of a cluster of their own, its leader killed the same way.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync, readdirSync, watch } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { pct } from './latency.mjs';
import { countSignals, machineEnv, procUsage, startHub, startRelay, stopAll, twoMachines, waitUntil } from './relay-latency.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** `n` nats-servers in one cluster with JetStream (names n1…), each its own store under `dir`. */
async function startCluster(dir, n) {
  const ports = [];
  const leaders = [];
  for (let i = 0; i < n; i++) ports.push({ client: await freePort(), route: await freePort() });
  const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(',');
  const nodes = ports.map((p, i) => {
    const store = join(dir, `n${i + 1}`);
    mkdirSync(store, { recursive: true });
    const proc = spawn('nats-server', ['-js', '-n', `n${i + 1}`, '--cluster_name', 'bench', '-sd', store, '-a', '127.0.0.1', '-p', String(p.client), '--cluster', `nats://127.0.0.1:${p.route}`, '--routes', routes], { stdio: ['ignore', 'pipe', 'pipe'] });
    const node = { name: `n${i + 1}`, url: `nats://127.0.0.1:${p.client}`, proc, log: '' };
    const on = (b) => {
      node.log += b;
      // When each server said a stream got a new leader (the election's end, as the servers saw it).
      for (const m of String(b).matchAll(/new (stream|consumer) leader for '[^'>]*> ([^'>]+?)(?: > ([^']+))?'/g)) leaders.push({ kind: m[1], stream: m[2], consumer: m[3], at: performance.now() });
    };
    proc.stdout.on('data', on);
    proc.stderr.on('data', on);
    return node;
  });
  await waitUntil(() => nodes.some((x) => /metadata leader/i.test(x.log)), 30_000, 'the cluster\'s metadata leader');
  const gone = (p) => p.exitCode !== null || p.signalCode !== null;
  return {
    urls: nodes.map((x) => x.url).join(','),
    /** Milliseconds from `t` until a server logged a new leader for `stream` (or its `consumer`), or null. */
    electedAfter: (stream, t, consumer) => {
      const e = leaders.find((x) => x.stream === stream && x.at > t && (consumer ? x.consumer === consumer : x.kind === 'stream'));
      return e ? e.at - t : null;
    },
    byName: (name) => nodes.find((x) => x.name === name),
    async kill(name) {
      const x = nodes.find((y) => y.name === name);
      x.proc.kill('SIGKILL');
      await new Promise((r) => (gone(x.proc) ? r() : x.proc.once('exit', r)));
    },
    async stop() {
      await Promise.all(nodes.map((x) => (gone(x.proc) ? null : new Promise((r) => (x.proc.once('exit', r), x.proc.kill('SIGTERM'))))));
    },
  };
}

/** Ask until it answers (a cluster electing a leader answers nothing for a while). */
async function until(fn, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const ms = (v) => `${v.toFixed(2)} ms`;
/** When the later of the two elections a failover waited for ended (ms after the kill; 0 when none was seen). */
const lastElection = (fo) => Math.max(fo.elected ?? 0, fo.consumer ?? 0);
const foRow = (what, fo) =>
  `| ${what} (leader ${fo.leader}) | ${(fo.failoverMs / 1000).toFixed(2)} s | ${secs(fo.elected)} / ${fo.consumer === null ? 'its leader lived' : secs(fo.consumer)} | ${secs(fo.failoverMs - lastElection(fo))} | ${fo.total}, ${fo.once ? 'each once at B' : 'NOT each once at B'} |`;
const secs = (v) => (v === null ? 'not seen' : `${(v / 1000).toFixed(2)} s`);

/** Writes on A every 20 ms, kills the leader of `stream` on `cluster`, and times the gap. */
async function writeThroughKill({ write, arrivedAt, leaderOf, cluster, quick }) {
  const written = [];
  let writing = true;
  const writer = (async () => {
    while (writing) {
      written.push({ id: write(), at: performance.now() });
      await sleep(20);
    }
  })();
  await sleep(quick ? 500 : 1_000);
  const leader = await leaderOf();
  const killedAt = performance.now();
  await cluster.kill(leader);
  const first = await waitUntil(() => {
    const after = written.find((w) => w.at > killedAt);
    return after && arrivedAt(after.id) !== undefined ? after : null;
  }, 60_000, 'a message written after the kill');
  const failoverMs = arrivedAt(first.id) - killedAt;
  await sleep(500);
  writing = false;
  await writer;
  return { failoverMs, written, leader, killedAt };
}

/** `restMs` > 0: first, both relays' CPU at rest on the cluster (1 s pull heartbeats), after a 10 s settle. */
async function relayFailover(bin, tmp, writeSignal, newId, quick, restMs = 0) {
  const dir = join(tmp, 'fo-relay');
  const cluster = await startCluster(dir, 3);
  const a = machineEnv(dir, 'alpha');
  const b = machineEnv(dir, 'bravo');
  const procs = [];
  const nc = await connect({ servers: cluster.urls.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  let watcher = null;
  try {
    procs.push(await startRelay(bin, a, cluster.urls), await startRelay(bin, b, cluster.urls));
    const jsm = await jetstreamManager(nc);
    await until(async () => (await jsm.streams.info('ATTEND')).config.num_replicas === 3, 30_000, 'the stream on three replicas');
    const bDir = join(b.root, 'signals', '_broadcast');
    mkdirSync(bDir, { recursive: true });
    const arrived = new Map();
    watcher = watch(bDir, (_e, name) => {
      const id = typeof name === 'string' && name.endsWith('.signal') ? name.slice(0, -'.signal'.length) : null;
      if (id && !arrived.has(id)) arrived.set(id, performance.now());
    });
    const write = () => {
      const id = newId();
      writeSignal(a.root, { kind: 'open' }, id, { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body: 'failover' });
      return id;
    };
    const warm = write();
    await waitUntil(() => arrived.has(warm), 20_000, 'the first message at bravo');
    let rest = null;
    if (restMs > 0) {
      await sleep(10_000);
      const c0 = procs.map((p) => procUsage(p.pid).cpuMs);
      const t0 = performance.now();
      await sleep(restMs);
      const span = performance.now() - t0;
      rest = procs.map((p, i) => ((procUsage(p.pid).cpuMs - c0[i]) / span) * 100);
    }
    const r = await writeThroughKill({ write, arrivedAt: (id) => arrived.get(id), leaderOf: async () => (await jsm.streams.info('ATTEND')).cluster.leader, cluster, quick });
    const want = new Set([warm, ...r.written.map((w) => w.id)]);
    await waitUntil(() => [...want].every((id) => arrived.has(id)), 60_000, 'every message at bravo after the failover');
    const files = readdirSync(bDir).filter((n) => n.endsWith('.signal')).map((n) => n.slice(0, -'.signal'.length));
    const once = files.length === want.size && files.every((id) => want.has(id));
    const consumer = cluster.electedAfter('ATTEND', r.killedAt, 'attend-bravo-bcast');
    return { ...r, total: want.size, once, elected: cluster.electedAfter('ATTEND', r.killedAt), consumer, rest };
  } finally {
    watcher?.close();
    await nc.close().catch(() => {});
    await stopAll(procs);
    await cluster.stop();
  }
}

async function rawFailover(tmp, payload, quick) {
  const cluster = await startCluster(join(tmp, 'fo-raw'), 3);
  const nc = await connect({ servers: cluster.urls.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  try {
    const jsm = await jetstreamManager(nc);
    await until(() => jsm.streams.add({ name: 'BENCHFO', subjects: ['benchfo.>'], num_replicas: 3, duplicate_window: 60_000_000_000 }), 30_000, 'the raw stream');
    await until(() => jsm.consumers.add('BENCHFO', { durable_name: 'fo', ack_policy: AckPolicy.Explicit }), 30_000, 'the raw consumer');
    const js = jetstream(nc);
    const arrived = new Map();
    let stop = false;
    const consumer = (async () => {
      while (!stop) {
        try {
          const it = await (await js.consumers.get('BENCHFO', 'fo')).consume({ max_messages: 1024, expires: 2_000 });
          const end = setInterval(() => stop && it.stop(), 100);
          for await (const m of it) {
            const id = m.headers?.get('Nats-Msg-Id');
            if (id && !arrived.has(id)) arrived.set(id, performance.now());
            m.ack();
          }
          clearInterval(end);
        } catch {
          await sleep(250);
        }
      }
    })();
    let n = 0;
    // Each message published until acknowledged (500 ms a try), as a careful raw client would.
    const write = () => {
      const id = `m${++n}`;
      void (async () => {
        for (let i = 0; i < 200; i++) {
          try {
            await js.publish('benchfo.x', payload, { msgID: id, timeout: 500 });
            return;
          } catch {
            await sleep(50);
          }
        }
      })();
      return id;
    };
    const warm = write();
    await waitUntil(() => arrived.has(warm), 20_000, 'the first raw message');
    const r = await writeThroughKill({ write, arrivedAt: (id) => arrived.get(id), leaderOf: async () => (await jsm.streams.info('BENCHFO')).cluster.leader, cluster, quick });
    await waitUntil(() => r.written.every((w) => arrived.has(w.id)), 60_000, 'every raw message after the failover');
    stop = true;
    await Promise.race([consumer, sleep(3_000)]);
    return { ...r, elected: cluster.electedAfter('BENCHFO', r.killedAt), consumer: cluster.electedAfter('BENCHFO', r.killedAt, 'fo') };
  } finally {
    await nc.close().catch(() => {});
    await cluster.stop();
  }
}

/**
 * The backlog on a hub of its own, for a build given (`relayBin`): both relays up, A's stopped,
 * `count` broadcasts written on A, then A started again, timed from its spawn until B holds all.
 */
async function backlogOn(relayBin, dir, count) {
  const { hub, a, b, writeSignal, newId } = await twoMachines(relayBin, dir);
  const procs = [];
  try {
    const first = await startRelay(relayBin, a, hub.url);
    procs.push(first, await startRelay(relayBin, b, hub.url));
    const bDir = join(b.root, 'signals', '_broadcast');
    const write = (body) => writeSignal(a.root, { kind: 'open' }, newId(), { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body });
    write('warm');
    await waitUntil(() => countSignals(bDir) >= 1, 20_000, 'the first message at bravo');
    await stopAll([first]);
    for (let i = 0; i < count; i++) write(`backlog ${i}`);
    const t0 = performance.now();
    procs.push(await startRelay(relayBin, a, hub.url));
    await waitUntil(() => countSignals(bDir) >= count + 1, 60_000, 'the backlog at bravo');
    return performance.now() - t0;
  } finally {
    await stopAll(procs);
    hub.stop();
  }
}

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 100 : 500;
  const loadAtStart = loadavg()[0].toFixed(1);
  const backlog = 1000;
  const { hub, a, b, writeSignal, newId } = await twoMachines(bin, tmp);
  const procs = [];
  const nc = await connect({ servers: hub.url });
  let watcher = null;
  try {
    let relayA = await startRelay(bin, a, hub.url);
    procs.push(relayA, await startRelay(bin, b, hub.url));

    // 1. The relay: a broadcast written on A → its file in B's #open (an inotify watch on the
    // directory), the relay's part alone; relay-latency.mjs times the line on B's sensor.
    const bDir = join(b.root, 'signals', '_broadcast');
    mkdirSync(bDir, { recursive: true });
    const waiting = new Map();
    watcher = watch(bDir, (_ev, name) => {
      const id = typeof name === 'string' && name.endsWith('.signal') ? name.slice(0, -'.signal'.length) : null;
      const w = id ? waiting.get(id) : undefined;
      if (w) {
        waiting.delete(id);
        w(performance.now());
      }
    });
    // Where the time goes: A's own write (the bus's synced writeSignal), the write done → the
    // relay's publish seen on the hub (a core subscription on attend.>), the hub → B's file.
    const onHub = new Map();
    const tap = nc.subscribe('attend.>', {
      callback: (_e, m) => {
        const id = m.headers?.get('Attend-Id');
        if (id && !onHub.has(id)) onHub.set(id, performance.now());
      },
    });
    const legs = { write: [], out: [], in: [] };
    const relaySend = (i) =>
      new Promise((resolve, reject) => {
        const id = newId();
        const t0 = performance.now();
        let tw = t0;
        const timer = setTimeout(() => reject(new Error(`message ${i} never reached bravo`)), 20_000);
        waiting.set(id, (t1) => {
          clearTimeout(timer);
          const th = onHub.get(id);
          onHub.delete(id);
          if (i >= 0 && th !== undefined) {
            legs.write.push(tw - t0);
            legs.out.push(th - tw);
            legs.in.push(t1 - th);
          }
          resolve(t1 - t0);
        });
        writeSignal(a.root, { kind: 'open' }, id, { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body: `cross-machine ${i}` });
        tw = performance.now();
      });
    for (let i = 0; i < 20; i++) await relaySend(-1 - i);
    const relayLat = [];
    for (let i = 0; i < n; i++) relayLat.push(await relaySend(i));
    tap.unsubscribe();

    // 2. Raw core NATS: publish → subscriber, one at a time, a payload of a signal's size.
    const payload = new TextEncoder().encode('x'.repeat(300));
    const sub = nc.subscribe('bench.raw');
    let arrived = null;
    void (async () => {
      for await (const _m of sub) arrived?.();
    })();
    const coreOne = () =>
      new Promise((resolve) => {
        const t0 = performance.now();
        arrived = () => resolve(performance.now() - t0);
        nc.publish('bench.raw', payload);
      });
    for (let i = 0; i < 20; i++) await coreOne();
    const coreLat = [];
    for (let i = 0; i < n; i++) coreLat.push(await coreOne());
    sub.unsubscribe();

    // 3. Raw JetStream: publish (acked) → a durable consumer's delivery, one at a time.
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BENCHRAW', subjects: ['benchraw.>'] });
    await jsm.consumers.add('BENCHRAW', { durable_name: 'lat', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New, filter_subject: 'benchraw.lat' });
    const js = jetstream(nc);
    const cons = await js.consumers.get('BENCHRAW', 'lat');
    const msgs = await cons.consume();
    let got = null;
    void (async () => {
      for await (const m of msgs) {
        m.ack();
        got?.();
      }
    })();
    const jsOne = () =>
      new Promise((resolve, reject) => {
        const t0 = performance.now();
        got = () => resolve(performance.now() - t0);
        js.publish('benchraw.lat', payload).catch(reject);
      });
    for (let i = 0; i < 20; i++) await jsOne();
    const jsLat = [];
    for (let i = 0; i < n; i++) jsLat.push(await jsOne());
    await msgs.close();

    // 4. A 1,000-message backlog: the relay (A stopped while they are written) …
    await stopAll([relayA]);
    const before = countSignals(bDir);
    for (let i = 0; i < backlog; i++) writeSignal(a.root, { kind: 'open' }, newId(), { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body: `backlog ${i}` });
    const tb0 = performance.now();
    relayA = await startRelay(bin, a, hub.url);
    procs.push(relayA);
    await waitUntil(() => countSignals(bDir) >= before + backlog, 60_000, 'the backlog at bravo');
    const relayBacklog = performance.now() - tb0;
    // … and raw JetStream: 1,000 publishes, then a new consumer reads them all.
    const tr0 = performance.now();
    await Promise.all(Array.from({ length: backlog }, () => js.publish('benchraw.bl', payload)));
    await jsm.consumers.add('BENCHRAW', { durable_name: 'bl', ack_policy: AckPolicy.Explicit, filter_subject: 'benchraw.bl' });
    const blc = await (await js.consumers.get('BENCHRAW', 'bl')).consume();
    let seen = 0;
    for await (const m of blc) {
      m.ack();
      if (++seen >= backlog) break;
    }
    const rawBacklog = performance.now() - tr0;
    await blc.close().catch(() => {});

    // 5. One writer's burst, both relays running: the rate that crosses against the rate A's
    // bus accepted the writes (each synced, as `attend send` writes).
    const burstN = quick ? 500 : 2000;
    const beforeBurst = countSignals(bDir);
    const tw0 = performance.now();
    for (let i = 0; i < burstN; i++) writeSignal(a.root, { kind: 'open' }, newId(), { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body: `burst ${i}` });
    const writeMs = performance.now() - tw0;
    await waitUntil(() => countSignals(bDir) >= beforeBurst + burstN, 60_000, 'the burst at bravo');
    const crossMs = performance.now() - tw0;
    await stopAll(procs.splice(0));
    watcher.close();
    watcher = null;

    // 6. Ten relays at rest on one hub (the relay's default presence TTL), CPU each over
    // restMs, against a node process that holds one idle NATS connection with a subscription.
    // With ATTEND_BENCH_BASELINE (another build's dist/tools/cli/attend.cjs, e.g. main's) ten
    // of that build rest at the same time on a hub of their own, so both sets see the same
    // load; a window of a minute, since /proc counts CPU in 10 ms ticks (0.05 % of 20 s).
    const restMs = quick ? 5_000 : 60_000;
    const settleMs = quick ? 3_000 : 10_000;
    const idle = spawn(process.execPath, ['--input-type=module', '-e', `import { connect } from '@nats-io/transport-node'; const nc = await connect({ servers: ${JSON.stringify(hub.url)}, pingInterval: 5000 }); nc.subscribe('idle.>'); process.stdout.write('up\\n'); setInterval(() => {}, 1 << 30);`], { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] });
    procs.push(idle);
    await new Promise((r) => idle.stdout.once('data', r));
    // Each set on a hub of its own: on the first one they would begin by importing every
    // broadcast measured above, and a loaded machine stretches that past the settle.
    const restSet = async (relayBin, tag) => {
      const restDir = join(tmp, `rest-${tag}`);
      mkdirSync(restDir, { recursive: true });
      const restHub = await startHub(restDir);
      const ten = [];
      for (let i = 0; i < 10; i++) ten.push(await startRelay(relayBin, machineEnv(restDir, `rest${tag}${i}`), restHub.url, { presenceTtl: null }));
      return { ten, restHub };
    };
    const baselineBin = process.env.ATTEND_BENCH_BASELINE;
    // The backlog again, each build on a hub of its own, baseline first, then this build.
    const backlogs = baselineBin ? { base: await backlogOn(baselineBin, join(tmp, 'bl-base'), backlog), cur: await backlogOn(bin, join(tmp, 'bl-cur'), backlog) } : null;
    const sets = [await restSet(bin, 'c'), ...(baselineBin ? [await restSet(baselineBin, 'b')] : [])];
    await sleep(settleMs); // the starts settle: presence put, buckets watched, first checks made
    const watched = [...sets.flatMap((x) => x.ten), idle];
    const c0 = watched.map((p) => procUsage(p.pid).cpuMs);
    const ts0 = performance.now();
    await sleep(restMs);
    const spanMs = performance.now() - ts0;
    const pcts = watched.map((p, i) => ((procUsage(p.pid).cpuMs - c0[i]) / spanMs) * 100);
    for (const x of sets) {
      await stopAll(x.ten);
      x.restHub.stop();
    }
    const cpuPct = pcts.slice(0, 10);
    const baseline = baselineBin ? { cpu: pcts.slice(10, 20) } : null;
    const idlePct = pcts[pcts.length - 1];
    await stopAll(procs.splice(0));

    // 7. Failover: the stream's leader of a 3-node cluster SIGKILLed while A writes a
    // broadcast every 20 ms; until the first written after the kill is on B.
    // Each kill's election takes its own time (a follower's random timeout), so three rounds
    // per build, each on a cluster of its own; the baseline build's too when given.
    const rounds = quick ? 1 : 3;
    const foRounds = async (relayBin, tag) => {
      const out = [];
      for (let i = 0; i < rounds; i++) out.push(await relayFailover(relayBin, join(tmp, `fo-${tag}${i}`), writeSignal, newId, quick, i === 0 && tag === 'c' ? (quick ? 10_000 : 30_000) : 0));
      return out;
    };
    const fos = await foRounds(bin, 'c');
    const fosBase = baselineBin ? await foRounds(baselineBin, 'b') : [];
    const foRaw = await rawFailover(tmp, payload, quick);

    for (const x of [relayLat, coreLat, jsLat, legs.write, legs.out, legs.in]) x.sort((p, q) => p - q);
    const row = (what, xs, goal) => `| ${what} | ${ms(pct(xs, 50))} | ${ms(pct(xs, 99))} | ${(pct(relayLat, 50) / pct(xs, 50)).toFixed(1)}× / ${(pct(relayLat, 99) / pct(xs, 99)).toFixed(1)}× | ${goal} |`;
    const leg = (what, xs) => `| ${what} | ${ms(pct(xs, 50))} | ${ms(pct(xs, 99))} |`;
    const met = (ok) => (ok ? 'met' : 'not met');
    const p50 = pct(relayLat, 50);
    const p99 = pct(relayLat, 99);
    const acceptRate = burstN / (writeMs / 1000);
    const crossRate = burstN / (crossMs / 1000);
    const rawRate = backlog / (rawBacklog / 1000);
    const maxPct = Math.max(...cpuPct);
    const load = loadavg()[0].toFixed(1);
    return {
      title: 'The relay against raw NATS (one run)',
      markdown: [
        `One \`nats-server\` on loopback (a 3-node cluster for failover), bus roots with an \`attend relay\` each, everything below measured in one run; load average ${loadAtStart} at the start, ${load} at the end (2 cores, shared). Latency: ${n} messages one at a time (after 20 to warm up); the relay's is a broadcast written on A until its file is in B's \`signals/_broadcast/\` (an inotify watch; the line on B's sensor is what \`relay-latency\` times); raw NATS's a 300-byte publish until a subscriber (core) or a durable consumer (JetStream, acked publish) has it. Backlog: ${backlog} broadcasts written on A while its relay was stopped, from the relay's spawn until B held all, against ${backlog} acked JetStream publishes and a new consumer reading them all.`,
        '',
        '| path | p50 | p99 | relay ÷ this (p50 / p99) | goal for the relay |',
        '|---|---|---|---|---|',
        row('attend relay: broadcast on A → file in B\'s #open', relayLat, `p50 ≤ 3 ms, p99 ≤ 10 ms (to the sensor line): p50 ${met(p50 <= 3)}, p99 ${met(p99 <= 10)}`),
        row('raw core NATS publish → subscriber', coreLat, '—'),
        row('raw JetStream publish → consumer', jsLat, '—'),
        '',
        'Where the relay\'s time goes (the same messages; a core subscription on `attend.>` sees each publish reach the hub):',
        '',
        '| leg | p50 | p99 |',
        '|---|---|---|',
        leg('A\'s own write (writeSignal: the file and its directory synced, as `attend send`)', legs.write),
        leg('written → published on the hub (A\'s relay: wake, scan, publish)', legs.out),
        leg('on the hub → file in B (stored, delivered to B\'s consumer, written and synced by B\'s relay)', legs.in),
        '',
        `| backlog of ${backlog.toLocaleString('en')} | time | relay ÷ raw |`,
        '|---|---|---|',
        `| attend relay (from its spawn, process start included) | ${(relayBacklog / 1000).toFixed(2)} s | ${(relayBacklog / rawBacklog).toFixed(1)}× (goal ≤ 1 s: ${met(relayBacklog <= 1000)}) |`,
        `| raw JetStream: publish all, a consumer reads all | ${(rawBacklog / 1000).toFixed(2)} s | 1× |`,
        ...(backlogs ? [`| the same on a fresh hub of its own: the baseline build (ATTEND_BENCH_BASELINE), then this build | ${(backlogs.base / 1000).toFixed(2)} s, then ${(backlogs.cur / 1000).toFixed(2)} s | ${(backlogs.base / rawBacklog).toFixed(1)}×, ${(backlogs.cur / rawBacklog).toFixed(1)}× |`] : []),
        '',
        `| one writer's burst of ${burstN.toLocaleString('en')} | rate | ratio |`,
        '|---|---|---|',
        `| A's bus accepted the writes (one process, each synced) | ${Math.round(acceptRate).toLocaleString('en')} msg/s in ${(writeMs / 1000).toFixed(2)} s | 1 |`,
        `| crossed to B (first write until B held all) | ${Math.round(crossRate).toLocaleString('en')} msg/s in ${(crossMs / 1000).toFixed(2)} s | ${((crossRate / acceptRate) * 100).toFixed(0)} % of the accept rate (goal ≥ 80 %: ${met(crossRate >= 0.8 * acceptRate)}) |`,
        `| raw JetStream, the backlog above (publish all, read all) | ${Math.round(rawRate).toLocaleString('en')} msg/s | — |`,
        '',
        `At rest, ten relays on a hub of their own (default presence TTL, ${restMs / 1000} s after a ${settleMs / 1000} s settle): ${Math.min(...cpuPct).toFixed(2)}–${maxPct.toFixed(2)} % of a core each (${cpuPct.reduce((x, y) => x + y, 0).toFixed(1)} % for all ten, ${idlePct > 0 ? `${(cpuPct.reduce((x, y) => x + y, 0) / 10 / idlePct).toFixed(1)}× the idle connection on average; ` : ''}goal < 0.5 % each: ${met(maxPct < 0.5)}); a node process holding one idle NATS connection: ${idlePct.toFixed(2)} %.${baseline ? ` Ten of the baseline build (ATTEND_BENCH_BASELINE), resting at the same time on another fresh hub: ${Math.min(...baseline.cpu).toFixed(2)}–${Math.max(...baseline.cpu).toFixed(2)} % each (${baseline.cpu.reduce((x, y) => x + y, 0).toFixed(1)} % for all ten).` : ''} CPU from /proc (10 ms ticks).`,
        '',
        '| failover: the stream\'s leader SIGKILLed, a message written every 20 ms | kill → first message written after it delivered | the elections (stream / B\'s broadcast consumer) | past the last election | messages |',
        '|---|---|---|---|---|',
        ...[...fos.map((fo, i) => foRow(`attend relay, this build, round ${i + 1}`, fo)), ...fosBase.map((fo, i) => foRow(`attend relay, the baseline build (ATTEND_BENCH_BASELINE), round ${i + 1}`, fo))],
        `| raw JetStream client, its own 3-node cluster, R3 stream (publish retried every 0.5 s until acked) | ${(foRaw.failoverMs / 1000).toFixed(2)} s | ${secs(foRaw.elected)} / ${foRaw.consumer === null ? 'its leader lived' : secs(foRaw.consumer)} | ${secs(foRaw.failoverMs - lastElection(foRaw))} | ${foRaw.written.length}, all delivered |`,
        '',
        `At rest on the cluster of round 1, before its kill (the pull heartbeat is 1 s on a cluster, against 10 s on a lone server; ${fos[0].rest ? `${(quick ? 10 : 30)} s after a 10 s settle`: 'not measured'}): relay A ${fos[0].rest ? fos[0].rest[0].toFixed(2) : '-'} %, relay B ${fos[0].rest ? fos[0].rest[1].toFixed(2) : '-'} % of a core.`,
        '',
        `Each round is a 3-node cluster of its own with an R3 stream; an election is the time from the kill until the first server logged the new leader. Goal ≤ 5 s: met in ${fos.filter((fo) => fo.failoverMs <= 5000 && fo.once).length} of ${fos.length} rounds for this build. nats-server 2.9 elects a new leader only after a follower\'s election timeout (4–9 s, fixed in its code), so a killed leader bounds failover for any client; what the relay adds is the time past the last election it waited for. A killed node that leads nothing costs only the reconnect (250 ms).`,
      ].join('\n'),
    };
  } finally {
    watcher?.close();
    await nc.close().catch(() => {});
    await stopAll(procs);
    hub.stop();
  }
}
