// The relay next to raw NATS on the same run (issue 25, Performance): one nats-server on
// loopback, two bus roots with an `attend relay` each. Latency: a broadcast written on A,
// until its file is in B's #open; against a core NATS publish → a
// subscriber, and a JetStream publish → a consumer, one at a time on the same server. Backlog:
// 1,000 broadcasts written on A while its relay is stopped, timed from the relay's start
// until B holds all; against 1,000 JetStream publishes, then one consumer reading them all.

import { join } from 'node:path';
import { mkdirSync, watch } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { busLib, pct } from './latency.mjs';
import { countSignals, machineEnv, startHub, startRelay, stopAll, waitUntil } from './relay-latency.mjs';

const ms = (v) => `${v.toFixed(2)} ms`;

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 100 : 500;
  const backlog = 1000;
  const hub = await startHub(tmp);
  const a = machineEnv(tmp, 'alpha');
  const b = machineEnv(tmp, 'bravo');
  const { writeSignal, createIdFactory } = await busLib(bin);
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const procs = [];
  const nc = await connect({ servers: hub.url });
  let watcher = null;
  try {
    let relayA = await startRelay(bin, a, hub.url);
    procs.push(relayA, await startRelay(bin, b, hub.url));

    // 1. The relay: a broadcast written on A → its file in B's #open (an inotify watch on the
    // directory). The sensor is left out: since the identity checks, a bench-made session's
    // sensor is refused outside a real Claude Code process tree.
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
    const relaySend = (i) =>
      new Promise((resolve, reject) => {
        const id = newId();
        const t0 = performance.now();
        const timer = setTimeout(() => reject(new Error(`message ${i} never reached bravo`)), 20_000);
        waiting.set(id, (t1) => {
          clearTimeout(timer);
          resolve(t1 - t0);
        });
        writeSignal(a.root, { kind: 'open' }, id, { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body: `cross-machine ${i}` });
      });
    for (let i = 0; i < 20; i++) await relaySend(-i);
    const relayLat = [];
    for (let i = 0; i < n; i++) relayLat.push(await relaySend(i));

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

    for (const x of [relayLat, coreLat, jsLat]) x.sort((p, q) => p - q);
    const row = (what, xs, goal) => `| ${what} | ${ms(pct(xs, 50))} | ${ms(pct(xs, 99))} | ${(pct(relayLat, 50) / pct(xs, 50)).toFixed(1)}× / ${(pct(relayLat, 99) / pct(xs, 99)).toFixed(1)}× | ${goal} |`;
    return {
      title: 'The relay against raw NATS (one run)',
      markdown: [
        `One \`nats-server\` on loopback, two bus roots with an \`attend relay\` each, measured in one run. Latency: ${n} messages one at a time (after 20 to warm up); the relay's is a broadcast written on A until its file is in B's \`signals/_broadcast/\` (an inotify watch; B's sensor is left out: a bench-made session's sensor is refused since the identity checks, which also stops \`relay-latency\` here); raw NATS's a 300-byte publish until a subscriber (core) or a durable consumer (JetStream, acked publish) has it. Backlog: ${backlog} broadcasts written on A while its relay was stopped, from the relay's spawn until B held all, against ${backlog} acked JetStream publishes and a new consumer reading them all.`,
        '',
        '| path | p50 | p99 | relay ÷ this (p50 / p99) | goal for the relay |',
        '|---|---|---|---|---|',
        row('attend relay: broadcast on A → file in B\'s #open', relayLat, 'p50 ≤ 3 ms, p99 ≤ 10 ms (to the sensor line)'),
        row('raw core NATS publish → subscriber', coreLat, '—'),
        row('raw JetStream publish → consumer', jsLat, '—'),
        '',
        '| backlog of 1,000 | time | relay ÷ raw |',
        '|---|---|---|',
        `| attend relay (from its spawn, process start included) | ${(relayBacklog / 1000).toFixed(2)} s | ${(relayBacklog / rawBacklog).toFixed(1)}× (goal ≤ 1 s) |`,
        `| raw JetStream: publish all, a consumer reads all | ${(rawBacklog / 1000).toFixed(2)} s | 1× |`,
      ].join('\n'),
    };
  } finally {
    watcher?.close();
    await nc.close().catch(() => {});
    await stopAll(procs);
    hub.stop();
  }
}
