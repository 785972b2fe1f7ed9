// attend across machines when things fail (issue 13): the hub SIGKILLed and restarted in
// the middle of a burst, a relay SIGKILLed at a random moment, a relay stopped for a whole
// burst. Every message arrives once at every receiver, with the same ids.

import { afterEach, describe, expect, it } from 'vitest';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { type Machine, burst, expectAllAt, makeMachine } from '../helpers/relay.js';
import { runBin, waitFor, ME } from '../helpers/bus.js';
import { rmSync } from 'node:fs';

let nats: NatsServer | undefined;
const machines: Machine[] = [];

afterEach(async () => {
  for (const m of machines.splice(0)) {
    await m.stopRelay();
    m.bus.cleanup();
  }
  await nats?.stop();
  nats = undefined;
});

async function setup(hosts: string[]): Promise<Machine[]> {
  nats = await startNats();
  const ms = hosts.map((h) => makeMachine(h, () => nats!.url));
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

describe('attend relay: a hub that lost its disk', { timeout: 120_000 }, () => {
  it('relays recreate the stream; resync republishes from the files; receivers absorb what they have', async () => {
    const [a, b] = await setup(['alpha', 'bravo']);
    const before = await burst(a!, 50);
    // And one signed message (alpha's human): a resync carries its signature too.
    const signed = runBin(['send', 'signed before the loss'], { env: a!.bus.env });
    expect(signed.exitCode, signed.stderr).toBe(0);
    before.push(signed.stdout.trim());
    await expectAll(b!, before, 'before the loss');
    await nats!.kill();
    rmSync(nats!.storeDir, { recursive: true, force: true });
    await nats!.restart();
    // A machine that joins now finds an empty hub; the relays rebuilt the stream.
    const c = makeMachine('charlie', () => nats!.url);
    machines.push(c);
    await c.startRelay();
    const after = await burst(a!, 10);
    await expectAll(c, after, 'new traffic after the loss');
    expect(c.ids('_broadcast')).toEqual([...after].sort());
    const r = runBin(['relay', 'resync', '--server', nats!.url, '--host', 'alpha', '--since', '1h', '--json'], { env: a!.bus.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { published: number; duplicates: number; failed: number };
    expect(res.failed).toBe(0);
    expect(res.published + res.duplicates).toBe(61);
    await expectAll(c, [...before, ...after], 'charlie after the resync');
    // The signed one verifies at charlie (its key came through the rebuilt state bucket).
    const atC = JSON.parse(runBin(['inbox', signed.stdout.trim(), '--json'], { env: c.bus.env }).stdout) as { fromId: string; sig: string };
    expect(atC).toMatchObject({ fromId: `alpha:${ME}`, sig: 'ok' });
    expect(c.status()!.parked).toBe(0);
    // bravo had them all: nothing new, nothing parked.
    expect(b!.ids('_broadcast')).toEqual([...before, ...after].sort());
    await waitFor(() => (b!.status()!.duplicates as number) >= 50, { timeoutMs: 15_000, what: 'bravo absorbing the resync' });
    expect(b!.status()!.parked).toBe(0);
  });
});
