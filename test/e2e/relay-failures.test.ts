// attend across machines when things fail (issue 13): the hub SIGKILLed and restarted in
// the middle of a burst, a relay SIGKILLed at a random moment, a relay stopped for a whole
// burst; a hub that lost its store (issue 25 item 2). Every message arrives once at every
// receiver, with the same ids.

import { afterEach, describe, expect, it } from 'vitest';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { type Machine, burst, expectAllAt, makeMachine } from '../helpers/relay.js';
import { type FakeSession, fakeSession, runBin, waitFor, ME } from '../helpers/bus.js';
import { readRemoteRoster, remoteMembers } from '../../tools/bus/presence/index.js';
import { rmSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { waitForHub } from '../helpers/hub.js';

let nats: NatsServer | undefined;
const machines: Machine[] = [];

const sessions: FakeSession[] = [];

afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  for (const m of machines.splice(0)) {
    await m.stopRelay();
    m.bus.cleanup();
  }
  await nats?.stop();
  nats = undefined;
});

async function setup(hosts: string[], opts: { family?: boolean } = {}): Promise<Machine[]> {
  nats = await startNats();
  const ms = hosts.map((h) => makeMachine(h, () => nats!.url, opts));
  machines.push(...ms);
  await Promise.all(ms.map((m) => m.startRelay()));
  return ms;
}

const expectAll = (receiver: Machine, ids: string[], what: string) => expectAllAt(receiver, ids, what, machines);

describe('attend relay: failures', { timeout: 120_000 }, () => {
  it('the hub SIGKILLed and restarted in the middle of a burst of 2,000 from two machines: every message once everywhere', async () => {
    const [a, b, c] = await setup(['alpha', 'bravo', 'charlie']);
    let killed = false;
    const killAt = async (i: number) => {
      if (i === 500 && !killed) {
        killed = true;
        await nats!.kill();
      }
    };
    const [fromA, fromB] = await Promise.all([burst(a!, 1000, { onProgress: killAt }), burst(b!, 1000)]);
    expect(killed).toBe(true);
    // While the hub is away, status says so and counts what waits to go out.
    await waitFor(() => a!.status()!.connected === false && (a!.status()!.outboundBacklog as number) > 0, { timeoutMs: 15_000, what: 'alpha reporting its backlog' });
    await nats!.restart();
    await expectAll(c!, [...fromA, ...fromB], 'after the hub restart');
    await expectAll(a!, [...fromA, ...fromB], 'alpha');
    await expectAll(b!, [...fromA, ...fromB], 'bravo');
    // No relay parked anything: a restart is not a conflict.
    for (const m of [a!, b!, c!]) expect(m.status()!.parked).toBe(0);
  });

  it('a relay SIGKILLed at a random moment of the burst and started again: every message once everywhere', async () => {
    const [a, b, c] = await setup(['alpha', 'bravo', 'charlie']);
    const at = 100 * (1 + Math.floor(Math.random() * 8));
    let killed: Promise<void> | null = null;
    let charlieKilled: Promise<void> | null = null;
    const [fromA, fromB] = await Promise.all([
      burst(a!, 1000, {
        onProgress: (i) => {
          if (i === at) killed = a!.killRelay();
        },
      }),
      burst(b!, 1000, {
        onProgress: (i) => {
          // charlie's relay dies as a receiver at another random moment
          if (i === 1000 - at) charlieKilled = c!.killRelay();
        },
      }),
    ]);
    // Both kills are awaited before the restarts: a kill still in flight would leave a dead
    // relay looking alive to the check below (seen under load: charlie never came back).
    await Promise.all([killed, charlieKilled]);
    expect(a!.relay).toBeNull();
    expect(c!.relay).toBeNull();
    await Promise.all([a!.startRelay(), c!.startRelay()]);
    await expectAll(c!, [...fromA, ...fromB], `after killing relays at ${at}`);
    await expectAll(b!, [...fromA, ...fromB], 'bravo');
    await expectAll(a!, [...fromA, ...fromB], 'alpha');
  });

  it('a machine whose relay is stopped for the whole burst catches up both ways when it starts again', async () => {
    const [a, b] = await setup(['alpha', 'bravo']);
    await b!.stopRelay();
    // Both machines keep writing while bravo is cut off: its local bus works as ever.
    const [fromA, fromB] = await Promise.all([burst(a!, 1000), burst(b!, 1000)]);
    expect(b!.ids('_broadcast')).toEqual([...fromB].sort());
    await b!.startRelay();
    await expectAll(b!, [...fromA, ...fromB], 'bravo after its restart');
    await expectAll(a!, [...fromA, ...fromB], 'alpha');
  });
});

describe('attend relay: a hub that lost its store', { timeout: 120_000 }, () => {
  it('every relay makes the stream and buckets again, puts its presence, keys and channels again and offers its messages again: a new machine gets them all, nobody anything twice', async () => {
    const [a, b] = await setup(['alpha', 'bravo'], { family: true });
    const ant = fakeSession(a!.bus, { name: 'ant' });
    sessions.push(ant);
    const made = runBin(['channels', 'create', 'ops', 'deploys'], { env: ant.env, cwd: ant.cwd });
    expect(made.exitCode, made.stderr).toBe(0);
    const before = await burst(a!, 50);
    // And one signed message (alpha's human): its key must be on the hub again for a new machine.
    const signed = runBin(['send', 'signed before the loss'], { env: a!.bus.env });
    expect(signed.exitCode, signed.stderr).toBe(0);
    before.push(signed.stdout.trim());
    await expectAll(b!, before, 'before the loss');
    await waitFor(() => remoteMembers(b!.bus.root, Date.now()).some((m) => m.id === ant.sessionId), { timeoutMs: 15_000, what: 'ant at bravo' });

    await nats!.kill();
    rmSync(nats!.storeDir, { recursive: true, force: true });
    // Written while the hub is away: the local bus is the record.
    const during = await burst(a!, 10);
    await nats!.restart();
    const lostAt = Date.now();

    // A machine that joins now: everything alpha still has is offered again, with no resync.
    const c = makeMachine('charlie', () => nats!.url, { family: true });
    machines.push(c);
    await c.startRelay();
    await expectAll(c, [...before, ...during], 'charlie after the loss');
    const atC = JSON.parse(runBin(['inbox', signed.stdout.trim(), '--json'], { env: c.bus.env }).stdout) as { fromId: string; sig: string };
    expect(atC).toMatchObject({ fromId: `alpha:${ME}`, sig: 'ok' });
    // Presence and channels were put again: ant is a peer at charlie, #ops is there with its description.
    await waitFor(() => remoteMembers(c.bus.root, Date.now()).some((m) => m.id === ant.sessionId), { timeoutMs: 15_000, what: 'ant at charlie' });
    await waitFor(() => /deploys/.test(runBin(['channels', '--json'], { env: c.bus.env }).stdout), { timeoutMs: 15_000, what: '#ops at charlie' });
    // bravo: the ten once; the rest, offered again, absorbed; ant seen again after the loss.
    await expectAll(b!, [...before, ...during], 'bravo after the loss');
    await waitFor(() => (b!.status()!.duplicates as number) >= 50, { timeoutMs: 15_000, what: 'bravo absorbing what was offered again' });
    await waitFor(() => (readRemoteRoster(b!.bus.root).hosts.alpha?.seen ?? 0) > lostAt, { timeoutMs: 15_000, what: 'alpha seen again at bravo' });
    for (const m of [a!, b!, c]) expect(m.status()!.parked).toBe(0);
    // A resync now finds the hub has it all.
    const r = runBin(['relay', 'resync', '--server', nats!.url, '--host', 'alpha', '--since', '1h', '--json'], { env: a!.bus.env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ published: 0, duplicates: 61, failed: 0 });
    expect(a!.relayLog()).toMatch(/the hub's stream is new \(it lost its store\)/);
  });

  it('buckets deleted under running relays (the stream kept): the next presence beat asks for the hub check, and each machine puts its entries again', async () => {
    const [a] = await setup(['alpha', 'bravo']);
    const made = runBin(['channels', 'create', 'ops', 'deploys'], { env: a!.bus.env });
    expect(made.exitCode, made.stderr).toBe(0);
    const nc = await connect({ servers: nats!.url });
    try {
      const jsm = await jetstreamManager(nc);
      const keys = async (bucket: string) => {
        const out: string[] = [];
        try {
          for await (const k of await (await new Kvm(nc).open(bucket)).keys()) out.push(k);
        } catch {
          // not there
        }
        return out.sort();
      };
      await waitForHub(async () => (await keys('attend-state')).includes('alpha.channels'), { timeoutMs: 15_000, what: 'alpha.channels on the hub' });
      for (const b of ['KV_attend-state', 'KV_attend-presence']) await jsm.streams.delete(b);
      // A watch on a deleted bucket hears nothing, and at rest nothing puts to the state
      // bucket: the next presence beat (2 s with --presence-ttl 4) finds its own bucket gone
      // and asks for the hub check at once, not at the 30 s check of a hub that looks whole.
      await waitForHub(async () => (await keys('attend-state')).includes('alpha.channels') && (await keys('attend-presence')).join() === 'alpha,bravo', { timeoutMs: 20_000, what: 'the entries put again' });
    } finally {
      await nc.close();
    }
  });
});
