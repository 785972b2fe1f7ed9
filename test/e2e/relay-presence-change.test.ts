// Presence without chatter (issue 25 item 5): a relay puts its roster when it changes and
// otherwise once per half TTL. With a 60 s TTL (a heartbeat every 30 s), a session that starts
// or ends on one machine is seen on the other within seconds, and the hub carries one put per
// change, not a stream of beats. nats-server 2.9 (Debian's) has no per-key TTL: the bucket's
// TTL ages out a machine that stops refreshing (the fallback this exercises).

import { describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { useRelayWorld } from '../helpers/relay.js';
import { waitFor } from '../helpers/bus.js';
import { readRemoteRoster } from '../../tools/bus/presence/remote.js';
import { PRESENCE_BUCKET } from '../../tools/relay/presence.js';

const world = useRelayWorld();

describe('presence on change and a slow heartbeat', { timeout: 60_000 }, () => {
  it('a session that starts and ends on alpha is seen at bravo within seconds under a 60 s TTL; alpha puts once per change', async () => {
    const a = world.machine('alpha');
    const b = world.machine('bravo');
    await Promise.all([a.startRelay(['--presence-ttl', '60']), b.startRelay(['--presence-ttl', '60'])]);
    const names = () => (readRemoteRoster(b.bus.root).hosts.alpha?.members ?? []).map((m) => m.name);
    await waitFor(() => readRemoteRoster(b.bus.root).hosts.alpha !== undefined, { timeoutMs: 15_000, what: 'alpha at bravo' });

    // Every put of alpha's key from here on.
    const nc = await connect({ servers: world.url() });
    const puts: string[] = [];
    const kv = await new Kvm(nc).open(PRESENCE_BUCKET);
    const w = await kv.watch({ key: 'alpha', include: 'updates' as never });
    void (async () => {
      for await (const e of w) puts.push(e.operation);
    })();
    try {
      const ant = world.session(a, 'ant');
      const t0 = Date.now();
      await waitFor(() => names().includes('ant'), { timeoutMs: 8_000, what: `ant at bravo: ${JSON.stringify(names())}` });
      const shown = Date.now() - t0;
      ant.kill();
      await waitFor(() => !names().includes('ant'), { timeoutMs: 8_000, what: 'ant gone at bravo' });
      // Two changes, two puts (a heartbeat is 30 s away); nothing else went to the hub.
      await waitFor(() => puts.length >= 2, { timeoutMs: 5_000, what: 'the two puts seen' });
      expect(puts).toEqual(['PUT', 'PUT']);
      expect(shown).toBeLessThan(8_000);
    } finally {
      w.stop();
      await nc.close();
    }
  });
});
