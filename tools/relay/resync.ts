// `attend relay resync --since <time>`: repair a hub that lost data from this machine's
// files. Every local (not imported) message since then is published again; the hub's
// duplicate window and the receivers' idempotent write absorb what was already there.

import { jetstreamManager } from '@nats-io/jetstream';
import type { RelaySettings } from './config.js';
import { Outbox } from './outbound.js';
import { connectHub, ensureStream, replicasFor } from './hub.js';
import { ImportedSet } from './store.js';
import { Publisher, pubHeaders } from './publish.js';
import { openStateBucket, putKeyLists } from './state.js';
import { remoteHostOf } from '../bus/presence/index.js';

export async function resync({ root, keysDir }: { root: string; keysDir: string }, settings: RelaySettings & { servers: string[] }, since: number, now: () => number): Promise<{ published: number; duplicates: number; failed: number }> {
  const hostOf = (id: string) => remoteHostOf(root, id);
  const outbox = new Outbox(root, settings.host, new ImportedSet(root), { since, dirs: {} }, hostOf);
  const nc = await connectHub(settings, `attend-resync-${settings.host}`);
  try {
    await ensureStream(await jetstreamManager(nc), replicasFor(nc.info, settings.servers.length));
    const pending = outbox.scan(now());
    // The signers' keys first, as the running relay does: receivers check every signature.
    await putKeyLists(await openStateBucket(nc, replicasFor(nc.info, settings.servers.length)), settings.host, keysDir, new Set(pending.flatMap((p) => (p.signer ? [p.signer.node] : []))));
    const pub = new Publisher(nc, `_INBOX_${settings.host}`);
    let published = 0;
    let duplicates = 0;
    let failed = 0;
    for (let i = 0; i < pending.length; i += 512) {
      const chunk = pending.slice(i, i + 512);
      const res = await pub.publishAll(
        chunk.map((p) => ({ subject: p.subject, data: p.data, headers: pubHeaders(p, settings.host) })),
        10_000,
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
