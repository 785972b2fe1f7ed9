// Presence between two relays over a real hub and two real buses: each puts its roster, the
// other writes it to relay/remote.json; a relay that stops takes its roster away; a hub that
// lost its store gets the bucket back from the next beat, and the rosters flow again once the
// watches start over after the reconnect.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { type TempBus, makeTempBus, waitFor } from '../helpers/bus.js';
import { waitForHub } from '../helpers/hub.js';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { connectHub, watchConnection } from '../../tools/relay/hub.js';
import { PRESENCE_BUCKET, Presence } from '../../tools/relay/presence.js';
import type { RemoteMember, RemoteRoster } from '../../tools/bus/presence/index.js';

let nats: NatsServer | undefined;
const conns: NatsConnection[] = [];
const buses: TempBus[] = [];
const running: Presence[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) await p.stop();
  for (const nc of conns.splice(0)) await nc.close();
  for (const b of buses.splice(0)) b.cleanup();
  await nats?.stop();
  nats = undefined;
});

async function relayOf(host: string, members: RemoteMember[]) {
  const bus = makeTempBus();
  buses.push(bus);
  const nc = await connectHub({ server: nats!.url, servers: [nats!.url], host }, `test-${host}`);
  conns.push(nc);
  const p = new Presence(nc, host, 2, bus.root, Date.now, () => members, () => {});
  running.push(p);
  void p.start(() => false);
  // As run.ts wires it: the watch starts over after a reconnect.
  watchConnection(nc, { disconnect() {}, reconnect: () => p.restart(), after() {} });
  const roster = (): RemoteRoster | null => {
    try {
      return JSON.parse(readFileSync(join(bus.root, 'relay', 'remote.json'), 'utf8')) as RemoteRoster;
    } catch {
      return null;
    }
  };
  const stop = async () => {
    await p.stop();
    running.splice(running.indexOf(p), 1);
  };
  return { bus, nc, stop, roster };
}

const ann: RemoteMember = { id: 'ann', kind: 'human', name: 'ann', origin: 'pts/1', host: 'alpha' };

describe('Presence', () => {
  it("each machine learns the other's roster, with its host; a stopped relay leaves", async () => {
    nats = await startNats();
    const alpha = await relayOf('alpha', [ann]);
    const bravo = await relayOf('bravo', []);
    await waitFor(() => bravo.roster()?.hosts.alpha?.members[0]?.id === 'ann', { what: "alpha's roster at bravo" });
    expect(bravo.roster()).toMatchObject({ ttlMs: 2_000, hosts: { alpha: { members: [{ ...ann, host: 'alpha' }] } } });
    expect(bravo.roster()?.hosts.bravo).toBeUndefined();
    await waitFor(() => alpha.roster()?.hosts.bravo !== undefined, { what: "bravo's (empty) roster at alpha" });
    await alpha.stop();
    await waitFor(() => bravo.roster()?.hosts.alpha === undefined, { what: 'alpha gone from bravo' });
  });

  it('a hub that lost its store: the next put makes the bucket again, and the watches started over hear the rosters again', async () => {
    nats = await startNats();
    const alpha = await relayOf('alpha', [ann]);
    const bravo = await relayOf('bravo', []);
    await waitFor(() => bravo.roster()?.hosts.alpha !== undefined, { what: "alpha's roster at bravo" });
    await nats.kill();
    rmSync(nats.storeDir, { recursive: true, force: true });
    await nats.restart();
    // A put finds no responders (no stream captures the subject) and makes the bucket again.
    const probe = await connectHub({ server: nats.url, servers: [nats.url], host: 'probe' }, 'test-probe');
    conns.push(probe);
    const kv = await waitForHub(() => new Kvm(probe).open(PRESENCE_BUCKET).then(async (b) => (await b.status(), b)), { timeoutMs: 15_000, what: 'the bucket made again' });
    await waitForHub(async () => (await kv.get('alpha'))?.operation === 'PUT', { timeoutMs: 15_000, what: "alpha's roster on the new bucket" });
    // bravo hears alpha again (a watch left on the lost bucket never would), and hears it go.
    const restarted = Date.now();
    await waitFor(() => (bravo.roster()?.hosts.alpha?.seen ?? 0) > restarted, { timeoutMs: 15_000, what: 'alpha heard again at bravo' });
    await alpha.stop();
    await waitFor(() => bravo.roster()?.hosts.alpha === undefined, { timeoutMs: 15_000, what: 'alpha gone from bravo' });
  });
});
