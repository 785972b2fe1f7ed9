// The shared state bucket between two relays over a real hub and two real buses: a channel
// made on one machine appears on the other with its members' host; a hub that lost its store
// gets the bucket back from the next put, with this machine's entries, and the other machine
// hears them once its watch starts over after the reconnect.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { type TempBus, makeTempBus, waitFor } from '../helpers/bus.js';
import { waitForHub } from '../helpers/hub.js';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { connectHub, watchConnection } from '../../tools/relay/hub.js';
import { STATE_BUCKET, SharedState } from '../../tools/relay/state.js';
import { type ChannelStore, newChannel, updateChannels } from '../../tools/bus/channels/index.js';

let nats: NatsServer | undefined;
const conns: NatsConnection[] = [];
const buses: TempBus[] = [];
const running: SharedState[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  for (const nc of conns.splice(0)) await nc.close();
  for (const b of buses.splice(0)) b.cleanup();
  await nats?.stop();
  nats = undefined;
});

async function connectTo(host: string): Promise<NatsConnection> {
  const nc = await connectHub({ server: nats!.url, servers: [nats!.url], host }, `test-${host}`);
  conns.push(nc);
  return nc;
}

/** A relay's shared state on a bus of its own, with these channels made before it starts. */
async function machine(host: string, made: string[] = []) {
  const bus = makeTempBus();
  buses.push(bus);
  const create = (name: string) =>
    updateChannels(bus.root, (s) => {
      const c = newChannel(Date.now(), 'ann');
      c.members.ann = { kind: 'human', joined: Date.now() };
      s.channels[name] = c;
    });
  // The store exists before the start, so its changes are watched (not left to the 5 s beat).
  updateChannels(bus.root, () => {});
  for (const name of made) create(name);
  const nc = await connectTo(host);
  const state = new SharedState(nc, host, bus.root, join(bus.home, '.config', 'attend', 'keys'), () => new Map(), () => {});
  running.push(state);
  await state.start(() => false);
  // As run.ts wires it: the watch starts over after a reconnect.
  watchConnection(nc, { disconnect() {}, reconnect: () => state.restart(), after() {} });
  const channels = (): ChannelStore | null => {
    try {
      return JSON.parse(readFileSync(join(bus.root, 'state', 'channels.json'), 'utf8')) as ChannelStore;
    } catch {
      return null;
    }
  };
  return { bus, nc, state, channels, create };
}

describe('SharedState', () => {
  it('a channel made on one machine appears on the other, its members with their host', async () => {
    nats = await startNats();
    const alpha = await machine('alpha');
    const bravo = await machine('bravo');
    alpha.create('ops');
    // A person is a party of their own machine: alpha's ann is alpha:ann here.
    await waitFor(() => bravo.channels()?.channels.ops?.members['alpha:ann'], { what: '#ops at bravo' });
    expect(bravo.channels()?.channels.ops?.members['alpha:ann']).toMatchObject({ kind: 'human', host: 'alpha' });
    expect(bravo.channels()?.channels.ops?.createdBy).toBe('alpha:ann');
  });

  it("a hub that lost its store: a put makes the bucket again with this machine's entries, and the other machine hears them", async () => {
    nats = await startNats();
    const alpha = await machine('alpha', ['ops']);
    const bravo = await machine('bravo');
    const probe = await connectTo('probe');
    const entry = async (kvName: string) => {
      const kv = await new Kvm(probe).open(STATE_BUCKET);
      await kv.status();
      const e = await kv.get(kvName);
      return e?.operation === 'PUT' ? (JSON.parse(e.string()) as { channels: Record<string, unknown> }) : null;
    };
    await waitForHub(async () => (await entry('alpha.channels'))?.channels.ops, { what: "alpha's channels on the hub" });
    await nats.kill();
    rmSync(nats.storeDir, { recursive: true, force: true });
    await nats.restart();
    await waitForHub(() => alpha.nc.flush().then(() => true), { timeoutMs: 15_000, what: 'alpha back on the hub' });
    // And JetStream up there (else the bucket waits for the next 5 s beat).
    await waitForHub(() => jetstreamManager(probe, { timeout: 300 }).then((m) => m.getAccountInfo()), { timeoutMs: 15_000, what: 'JetStream on the restarted hub' });
    // A change after the loss: its put fails, the bucket is made again, and the next push
    // puts everything of this machine's again.
    alpha.create('dev');
    await waitForHub(() => new Kvm(probe).open(STATE_BUCKET).then(async (b) => (await b.status(), true)), { timeoutMs: 15_000, what: 'the bucket made again' });
    await waitForHub(
      async () => {
        await alpha.state.push();
        const c = (await entry('alpha.channels'))?.channels;
        return c?.ops !== undefined && c.dev !== undefined;
      },
      { timeoutMs: 15_000, what: "alpha's channels on the new bucket" },
    );
    // bravo's watch, started over after its reconnect, hears the new channel.
    await waitFor(() => bravo.channels()?.channels.dev?.members['alpha:ann'], { timeoutMs: 15_000, what: '#dev at bravo' });
  });
});
