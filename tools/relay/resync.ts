// `attend relay resync --since <time>`: repair a hub that lost data from this machine's
// files. Every local (not imported) message since then is published again; the hub's
// duplicate window and the receivers' idempotent write absorb what was already there.

import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import type { RelaySettings } from './config.js';
import { Outbox } from './outbound.js';
import { connectHub, ensureStream } from './run.js';
import { ImportedSet } from './store.js';
import { remoteHostOf } from '../bus/remote.js';

export async function resync(root: string, settings: RelaySettings & { servers: string[] }, since: number, now: () => number): Promise<{ published: number; duplicates: number; failed: number }> {
  const hostOf = (id: string) => remoteHostOf(root, id);
  const outbox = new Outbox(root, settings.host, new ImportedSet(root), { since, dirs: {} }, hostOf);
  const nc = await connectHub(settings, `attend-resync-${settings.host}`);
  try {
    await ensureStream(await jetstreamManager(nc));
    const js = jetstream(nc);
    const pending = outbox.scan(now());
    let published = 0;
    let duplicates = 0;
    let failed = 0;
    for (let i = 0; i < pending.length; i += 512) {
      const chunk = pending.slice(i, i + 512);
      const res = await Promise.allSettled(
        chunk.map((p) => {
          const h = headers();
          h.set('Attend-Id', p.id);
          h.set('Attend-Origin', settings.host);
          return js.publish(p.subject, p.data, { msgID: p.msgId, headers: h, timeout: 10_000 });
        }),
      );
      for (const r of res) {
        if (r.status === 'rejected') failed++;
        else if (r.value.duplicate) duplicates++;
        else published++;
      }
    }
    return { published, duplicates, failed };
  } finally {
    await nc.close();
  }
}
