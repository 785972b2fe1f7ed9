// The relay's error predicates (tools/relay/nats-errors.ts) against what the pinned client
// really throws at a real nats-server: each case the relay branches on, and the look-alikes
// it must not take for them (a timeout, an error that merely says the words).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsConnection, connect, headers } from '@nats-io/transport-node';
import { type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { isConsumerNotFound, isMissingOnHub, isNoResponders, isStreamNotFound, isStreamOrConsumerNotFound, isTooLarge } from '../../tools/relay/nats-errors.js';
import { Publisher } from '../../tools/relay/publish.js';

let nats: NatsServer;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Publish one item through the relay's Publisher and return why it was refused. */
async function refusal(subject: string, data: Uint8Array, timeoutMs = 2_000): Promise<unknown> {
  const pub = new Publisher(nc, '_INBOX_test');
  try {
    const [r] = await pub.publishAll([{ subject, data, headers: headers() }], timeoutMs);
    if (r?.status !== 'rejected') throw new Error(`expected a refusal, got ${JSON.stringify(r)}`);
    return r.reason;
  } finally {
    pub.close();
  }
}

const all = (err: unknown) => ({
  streamNotFound: isStreamNotFound(err),
  consumerNotFound: isConsumerNotFound(err),
  notFound: isStreamOrConsumerNotFound(err),
  noResponders: isNoResponders(err),
  missing: isMissingOnHub(err),
  tooLarge: isTooLarge(err),
});
const none = { streamNotFound: false, consumerNotFound: false, notFound: false, noResponders: false, missing: false, tooLarge: false };

describe('nats-errors: the classes and codes the relay branches on', () => {
  it('a stream that is not there (info, a consumer of it)', async () => {
    const info = await thrown(() => jsm.streams.info('NOPE'));
    expect(all(info)).toEqual({ ...none, streamNotFound: true, notFound: true, missing: true });
    const get = await thrown(() => jetstream(nc).consumers.get('NOPE', 'c'));
    expect(isStreamNotFound(get)).toBe(true);
  });

  it('a consumer that is not there', async () => {
    await jsm.streams.add({ name: 'HASNOC', subjects: ['hasnoc.>'] });
    const info = await thrown(() => jsm.consumers.info('HASNOC', 'nobody'));
    expect(all(info)).toEqual({ ...none, consumerNotFound: true, notFound: true });
    expect(isConsumerNotFound(await thrown(() => jetstream(nc).consumers.get('HASNOC', 'nobody')))).toBe(true);
  });

  it('a publish no stream captures (the hub lost its store): no responders', async () => {
    expect(all(await refusal('nostream.here', new Uint8Array([1])))).toEqual({ ...none, noResponders: true, missing: true });
  });

  it('a message over the stream max_msg_size, and one over the server max_payload, are too large', async () => {
    await jsm.streams.add({ name: 'SMALL', subjects: ['small.>'], max_msg_size: 1024 });
    const overStream = await refusal('small.x', new Uint8Array(2048));
    expect(all(overStream)).toEqual({ ...none, tooLarge: true });
    // The server's default max_payload is 1 MiB; the client refuses before it sends.
    const overPayload = await refusal('small.x', new Uint8Array(1024 * 1024 + 1));
    expect(all(overPayload)).toEqual({ ...none, tooLarge: true });
    // Under both limits it is taken.
    const pub = new Publisher(nc, '_INBOX_test');
    const [ok] = await pub.publishAll([{ subject: 'small.x', data: new Uint8Array(100), headers: headers() }], 2_000);
    pub.close();
    expect(ok?.status).toBe('fulfilled');
  });

  it('a KV bucket whose stream is gone: a put finds no responders, a watch no stream', async () => {
    const kv = await new Kvm(nc).create('probe-bucket', { history: 1 });
    await kv.put('k', 'v');
    await jsm.streams.delete('KV_probe-bucket');
    expect(all(await thrown(() => kv.put('k', 'v')))).toEqual({ ...none, noResponders: true, missing: true });
    expect(isMissingOnHub(await thrown(() => kv.watch()))).toBe(true);
  });

  it('what merely looks like them is none of them: a timeout, an error that says the words', async () => {
    // Someone listens on the subject and never answers: the publish times out.
    const silent = nc.subscribe('silent.x', { callback: () => {} });
    await nc.flush();
    expect(all(await refusal('silent.x', new Uint8Array([1]), 200))).toEqual(none);
    silent.unsubscribe();
    for (const text of ['stream not found', 'consumer not found', '503 no responders', 'message size exceeds maximum allowed', "'payload' max_payload size exceeded"]) {
      expect(all(new Error(text)), text).toEqual(none);
    }
  });
});
