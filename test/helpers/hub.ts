// For the relay's loop tests: one real nats-server per test file and a client connection to
// it, the stream and buckets removed after each test, and local messages written straight to
// a temporary bus (test/helpers/bus.ts).

import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { type NatsConnection, connect } from '@nats-io/transport-node';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { type NatsServer, startNats } from './nats.js';

export interface Hub {
  server: NatsServer;
  url: string;
  nc: NatsConnection;
  jsm: JetStreamManager;
}

export function useHub(): () => Hub {
  let hub: Hub | undefined;
  beforeAll(async () => {
    const server = await startNats();
    const nc = await connect({ servers: server.url });
    hub = { server, url: server.url, nc, jsm: await jetstreamManager(nc) };
  });
  afterEach(async () => {
    // Every stream (ATTEND, the KV buckets' KV_*): each test starts on an empty hub.
    if (!hub) return;
    for await (const name of hub.jsm.streams.names()) await hub.jsm.streams.delete(name);
  });
  afterAll(async () => {
    await hub?.nc.close();
    await hub?.server.stop();
  });
  return () => {
    if (!hub) throw new Error('useHub: the hub starts in beforeAll');
    return hub;
  };
}

export { writeLocal } from './write-local.js';

/** waitFor (test/helpers/bus.ts) for a predicate that asks the hub: polled until it holds. */
export async function waitForHub<T>(fn: () => Promise<T | undefined | null | false>, opts: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  return vi.waitFor(
    async () => {
      const v = await fn();
      if (!v) throw new Error(`timed out waiting for ${opts.what ?? 'condition'}`);
      return v;
    },
    { timeout: opts.timeoutMs ?? 10_000, interval: 50 },
  );
}
