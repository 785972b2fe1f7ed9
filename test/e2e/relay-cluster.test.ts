// A cluster is a first-class hub (issue 25 item 1): three real nats-servers in one cluster,
// two machines' relays given every node. The relays make the stream and buckets with three
// replicas (found from the server, not asked) and say so in `relay status`; the stream's
// leader SIGKILLed in the middle of a burst, traffic goes on through the others and every
// message arrives once; the node started again catches up.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { type NatsCluster, startCluster } from '../helpers/nats.js';
import { waitForHub } from '../helpers/hub.js';
import { type Machine, burst, expectAllAt, makeMachine } from '../helpers/relay.js';
import { runBin, waitFor } from '../helpers/bus.js';
import { STREAM_NAME } from '../../tools/relay/subjects.js';

let cluster: NatsCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
const machines: Machine[] = [];

beforeAll(async () => {
  cluster = await startCluster(3);
  nc = await connect({ servers: cluster.urls.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  for (const m of machines.splice(0)) {
    await m.stopRelay();
    m.bus.cleanup();
  }
  await nc?.close();
  await cluster?.stop();
});

/** The stream as the cluster reports it, asked until it answers (a leader is being elected). */
const streamInfo = () => waitForHub(async () => jsm.streams.info(STREAM_NAME).catch(() => null), { timeoutMs: 20_000, what: 'the stream info' });

describe('attend relay on a three-node cluster', { timeout: 180_000 }, () => {
  it('three replicas; the leader killed mid-burst: traffic goes on, every message once both ways; it comes back current', async () => {
    const [a, b] = ['alpha', 'bravo'].map((h) => makeMachine(h, () => cluster.urls));
    machines.push(a!, b!);
    await Promise.all([a!.startRelay(), b!.startRelay()]);

    // Replicas from the cluster's size, and said so.
    const info = await streamInfo();
    expect(info.config.num_replicas).toBe(3);
    for (const bucket of ['KV_attend-presence', 'KV_attend-state']) {
      await waitForHub(async () => (await jsm.streams.info(bucket).catch(() => null))?.config.num_replicas === 3, { timeoutMs: 20_000, what: `${bucket} with 3 replicas` });
    }
    const leader = info.cluster!.leader!;
    // The first check can come while the new stream's followers still catch up ("1 of 3
    // current"); one behind is checked again every 5 s.
    await waitFor(() => {
      const v = a!.status()?.hubView as { leader?: string; current?: number } | undefined;
      return v?.leader === leader && v.current === 3;
    }, { timeoutMs: 15_000, what: 'alpha naming the leader, 3 of 3 current' });
    const st = runBin(['relay', 'status'], { env: a!.bus.env });
    expect(st.stdout).toMatch(new RegExp(`replicas: +3 \\(cluster attend-test, leader ${leader}, 3 of 3 current\\)`));

    // The burst, both ways; the leader dies a third of the way through alpha's.
    let killedAt = 0;
    const killLeader = async (i: number) => {
      if (i === 200 && killedAt === 0) {
        killedAt = Date.now();
        await cluster.byName(leader).kill();
      }
    };
    const [fromA, fromB] = await Promise.all([burst(a!, 600, { every: 50, onProgress: killLeader }), burst(b!, 300, { every: 50 })]);
    expect(killedAt).toBeGreaterThan(0);
    // Traffic goes on through the survivors: one written after the kill crosses.
    const late = await burst(a!, 1);
    await waitFor(() => b!.ids('_broadcast').includes(late[0]!), { timeoutMs: 30_000, what: 'a message written after the kill at bravo' });
    const failoverMs = Date.now() - killedAt;
    await expectAllAt(b!, [...fromA, ...late, ...fromB], 'bravo after the failover', machines);
    await expectAllAt(a!, [...fromA, ...late, ...fromB], 'alpha after the failover', machines);
    for (const m of [a!, b!]) expect(m.status()!.parked).toBe(0);
    // A new leader, named in status.
    const after = await streamInfo();
    expect(after.cluster!.leader).not.toBe(leader);
    await waitFor(() => (a!.status()?.hubView as { leader?: string } | undefined)?.leader === after.cluster!.leader, { timeoutMs: 15_000, what: 'alpha naming the new leader' });

    // The node comes back and catches up: the stream reports it current, with every message.
    await cluster.byName(leader).restart();
    await waitForHub(
      async () => {
        const i = await jsm.streams.info(STREAM_NAME).catch(() => null);
        const peers = [...(i?.cluster?.replicas ?? []), ...(i?.cluster?.leader ? [{ name: i.cluster.leader, current: true }] : [])];
        return peers.length === 3 && peers.every((p) => p.current) && peers.some((p) => p.name === leader);
      },
      { timeoutMs: 60_000, what: `${leader} current again` },
    );
    // Nothing arrived twice anywhere meanwhile.
    expect(b!.ids('_broadcast')).toEqual([...fromA, ...late, ...fromB].sort());
    console.log(`failover: a message written after the leader's kill crossed in ${failoverMs} ms`);
  });
});

describe('status never hides a stuck message', { timeout: 180_000 }, () => {
  it('two of three nodes killed: no quorum; status, attend status and doctor say what waits, how long and why; it goes once they return', async () => {
    const [c, d] = ['charlie', 'delta'].map((h) => makeMachine(h, () => cluster.urls));
    machines.push(c!, d!);
    await Promise.all([c!.startRelay(), d!.startRelay()]);
    const ok = await burst(c!, 1);
    await waitFor(() => d!.ids('_broadcast').includes(ok[0]!), { timeoutMs: 20_000, what: 'traffic before the outage' });
    // Keep the node charlie's relay is not on, so it stays connected while the stream has no quorum.
    const keep = cluster.nodes[0]!;
    const gone = cluster.nodes.slice(1);
    for (const n of gone) await n.kill();
    const stuck = await burst(c!, 1);
    const json = () => JSON.parse(runBin(['relay', 'status', '--json'], { env: c!.bus.env }).stdout) as { connected: boolean; waiting: { out: { count: number; since: number; reason: string | null } } };
    await waitFor(
      () => {
        const v = json();
        return v.connected && v.waiting.out.count === 1 && Date.now() - v.waiting.out.since > 3_000 && /no replica quorum/.test(v.waiting.out.reason ?? '');
      },
      { timeoutMs: 45_000, what: `charlie's status naming the stuck message: ${JSON.stringify(json())}\n${c!.relayLog()}` },
    );
    const text = runBin(['relay', 'status'], { env: c!.bus.env }).stdout;
    expect(text).toMatch(/^waiting: +out 1, oldest \d+s: no replica quorum on the hub/m);
    expect(runBin(['status'], { env: c!.bus.env }).stdout).toMatch(/relay: .*waiting out 1, oldest \d+s: no replica quorum/);
    const doc = runBin(['doctor', '--json'], { env: c!.bus.env });
    const relayCheck = (JSON.parse(doc.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find((k) => k.name === 'relay');
    expect(relayCheck).toMatchObject({ status: 'warn' });
    expect(relayCheck!.detail).toMatch(/out waiting 1, oldest \d+s: no replica quorum/);
    expect(d!.ids('_broadcast')).not.toContain(stuck[0]);

    // The nodes return: the message goes, once, and nothing waits.
    for (const n of gone) await n.restart();
    await waitFor(() => d!.ids('_broadcast').includes(stuck[0]!), { timeoutMs: 60_000, what: 'the stuck message at delta' });
    await waitFor(() => json().waiting.out.count === 0 && json().waiting.out.reason === null, { timeoutMs: 15_000, what: 'nothing waiting at charlie' });
    expect(d!.ids('_broadcast').filter((id) => id === stuck[0])).toHaveLength(1);
    expect(keep.pid).toBeGreaterThan(0);
  });
});

describe('attend relay hub-config --cluster', { timeout: 120_000 }, () => {
  it('writes one config per node that form a cluster; a relay with its creds makes three replicas', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const out = mkdtempSync(join(tmpdir(), 'attend-hubcfg-'));
    let hub: NatsCluster | undefined;
    const m = makeMachine('alpha', () => hub!.urls, { creds: join(out, 'hub', 'alpha.creds') });
    machines.push(m);
    const { env } = m.bus;
    try {
      const r = runBin(['relay', 'hub-config', '--hosts', 'alpha,bravo', '--out', join(out, 'hub'), '--listen', '127.0.0.1:4222', '--cluster', '--json'], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      const res = JSON.parse(r.stdout) as { configs: string[]; creds: Record<string, string>; servers: string };
      expect(res.configs.map((c) => c.split('/').pop())).toEqual(['attend-1.conf', 'attend-2.conf', 'attend-3.conf']);
      expect(res.servers).toBe('nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224');
      const conf = readFileSync(res.configs[1]!, 'utf8');
      expect(conf).toMatch(/server_name: "attend-2"/);
      expect(conf).toMatch(/listen: "127\.0\.0\.1:4223"/);
      expect(conf).toMatch(/store_dir: ".*jetstream-attend-2"/);
      expect(conf.match(/nats-route:\/\/route:[^@]+@127\.0\.0\.1:622[234]/g)).toHaveLength(3);
      // A second run would replace the keys: refused.
      expect(runBin(['relay', 'hub-config', '--hosts', 'alpha', '--out', join(out, 'hub'), '--cluster'], { env }).exitCode).toBe(2);
      expect(runBin(['relay', 'hub-config', '--hosts', 'alpha', '--out', join(out, 'two'), '--cluster', '--nodes', '2'], { env }).exitCode).toBe(2);

      // The same configs on free ports (the flags override the ports they name).
      hub = await startCluster(3, { configs: res.configs });
      expect(res.creds.alpha).toBe(join(out, 'hub', 'alpha.creds'));
      await m.startRelay();
      await waitFor(() => (m.status()?.hubView as { replicas?: number } | undefined)?.replicas === 3, { timeoutMs: 20_000, what: `alpha on three replicas:\n${m.relayLog()}` });
      await m.stopRelay();
    } finally {
      await hub?.stop();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
