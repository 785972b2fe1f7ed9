// The outbound loop's parts: what a chunk's answers mean (pure), publishing a chunk to a real
// hub from a real bus (acks, duplicates, a message too large, a hub without its stream, a key
// that cannot be put), the cursor's writes, and the loop itself (publish, wait for a hub that
// is away, write the cursor when it stops).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errors } from '@nats-io/transport-node';
import { JetStreamApiError, jetstream } from '@nats-io/jetstream';
import { type TempBus, useTempBus, waitFor } from '../helpers/bus.js';
import { useHub, writeLocal } from '../helpers/hub.js';
import { ensureStream } from '../../tools/relay/hub.js';
import { CursorSaver, OutboundLoop, type ChunkDeps, publishChunk, settleChunk } from '../../tools/relay/outbound-loop.js';
import { Outbox, type Pending } from '../../tools/relay/outbound.js';
import { Publisher } from '../../tools/relay/publish.js';
import { StatusBoard } from '../../tools/relay/status-board.js';
import { type Cursor, ImportedSet, listParked, readCursor } from '../../tools/relay/store.js';
import { STREAM_NAME } from '../../tools/relay/subjects.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
const hub = useHub();

const pending = (id: string, route = 'bcast', over: Partial<Pending> = {}): Pending => ({ dir: '_broadcast', id, subject: `attend.v1.alpha.${route}`, msgId: `${id}:${route}`, data: new Uint8Array([1]), timeMs: 1, ...over });
const ok = (duplicate = false): PromiseSettledResult<{ duplicate: boolean }> => ({ status: 'fulfilled', value: { duplicate } });
const no = (reason: unknown): PromiseSettledResult<{ duplicate: boolean }> => ({ status: 'rejected', reason });
const tooLarge = new JetStreamApiError({ code: 400, err_code: 10054, description: 'message size exceeds maximum allowed' });

describe('settleChunk', () => {
  it('acknowledged messages are done; the hub\'s duplicates are done and not counted as published', () => {
    const a = pending('a');
    const b = pending('b');
    expect(settleChunk([a, b], [ok(), ok(true)])).toEqual({ done: [a, b], retry: [], parked: [], published: 1, missing: false });
  });

  it('a message with one route refused is retried whole; the reason is kept; a timeout is not a missing stream', () => {
    const t1 = pending('a', 'tray.box.k1');
    const t2 = pending('a', 'tray.cat.k1');
    const out = settleChunk([t1, t2], [ok(), no(new Error('timeout: the hub did not acknowledge'))]);
    expect(out).toMatchObject({ done: [], retry: [t1], published: 1, failure: 'timeout: the hub did not acknowledge', missing: false });
  });

  it('no responders (the hub lost its stream) asks for a repair', () => {
    const a = pending('a');
    expect(settleChunk([a], [no(new errors.NoRespondersError(a.subject))])).toMatchObject({ retry: [a], missing: true });
  });

  it('a route the hub will never take is parked and the message is done (the local file stays)', () => {
    const a = pending('a');
    const b = pending('b');
    const over = new errors.InvalidArgumentError("'payload' max_payload size exceeded");
    const out = settleChunk([a, b], [no(tooLarge), no(over)]);
    expect(out.done).toEqual([a, b]);
    expect(out.parked.map((x) => [x.p.id, x.reason])).toEqual([
      ['a', 'the hub refused it: message size exceeds maximum allowed'],
      ['b', "the hub refused it: 'payload' max_payload size exceeded"],
    ]);
    expect(out.failure).toBeUndefined();
  });
});

function fixture(over: Partial<ChunkDeps> = {}) {
  const cursor: Cursor = { since: Date.now() - 1_000, dirs: {} };
  const outbox = new Outbox(bus.root, 'alpha', new ImportedSet(bus.root), cursor, () => undefined);
  const pub = new Publisher(hub().nc, '_INBOX_alpha');
  const board = new StatusBoard(bus.root, Date.now, { pid: process.pid, host: 'alpha', hub: hub().url, parked: 0 }, () => outbox.inflightCount);
  const d: ChunkDeps = { root: bus.root, host: 'alpha', now: Date.now, pub, keys: { ensureKey: async () => {} }, outbox, status: board.status, ...over };
  return { outbox, pub, board, d, cursor };
}

async function streamCount(): Promise<number> {
  return (await hub().jsm.streams.info(STREAM_NAME)).state.messages;
}

describe('publishChunk', () => {
  it('publishes with the headers receivers need, counts what the hub stored, and marks the messages done', async () => {
    await ensureStream(hub().jsm);
    const { outbox, pub, d } = fixture();
    const ids = [writeLocal(bus.root, 'one'), writeLocal(bus.root, 'two')];
    const chunk = outbox.scan(Date.now());
    expect(chunk.map((p) => p.id)).toEqual(ids);
    expect(await publishChunk(d, chunk)).toEqual({ missing: false });
    expect(d.status).toMatchObject({ published: 2, parked: 0 });
    expect(d.status.lastContact).not.toBeNull();
    expect(outbox.inflightCount).toBe(0);
    expect(outbox.scan(Date.now())).toEqual([]);
    const m = await jetstream(hub().nc).consumers.get(STREAM_NAME).then((c) => c.next());
    expect(m?.subject).toBe('attend.v1.alpha.bcast');
    expect([m?.headers?.get('Attend-Id'), m?.headers?.get('Attend-Origin'), m?.headers?.get('Nats-Msg-Id')]).toEqual([ids[0], 'alpha', `${ids[0]}:bcast`]);
    // The same chunk again: the hub's duplicate window absorbs it.
    await publishChunk(d, chunk);
    expect(d.status.published).toBe(2);
    expect(await streamCount()).toBe(2);
    pub.close();
  });

  it('a message over the stream limit is parked as outbound with the hub\'s reason, and not retried', async () => {
    await hub().jsm.streams.add({ name: STREAM_NAME, subjects: ['attend.v1.>'], max_msg_size: 600 });
    const { outbox, pub, d } = fixture();
    const big = writeLocal(bus.root, 'x'.repeat(1_000));
    writeLocal(bus.root, 'small');
    expect(await publishChunk(d, outbox.scan(Date.now()))).toEqual({ missing: false });
    expect(d.status).toMatchObject({ published: 1, parked: 1 });
    expect(d.status.lastError).toBeUndefined();
    expect(listParked(bus.root)).toEqual([expect.objectContaining({ kind: 'outbound', id: big, origin: 'alpha', subject: 'attend.v1.alpha.bcast', reason: 'the hub refused it: message size exceeds maximum allowed' })]);
    expect(outbox.scan(Date.now())).toEqual([]);
    expect(await streamCount()).toBe(1);
    pub.close();
  });

  it('a hub without the stream: no responders, the messages kept for the next scan, a repair asked for', async () => {
    const { outbox, pub, d } = fixture();
    const id = writeLocal(bus.root, 'into the void');
    expect(await publishChunk(d, outbox.scan(Date.now()))).toEqual({ missing: true });
    expect(d.status.lastError).toMatch(/^publish: no responders/);
    expect(d.status.published).toBe(0);
    expect(outbox.scan(Date.now()).map((p) => p.id)).toEqual([id]);
    pub.close();
  });

  it('a signer\'s key that cannot be put first: nothing is published, everything is retried', async () => {
    await ensureStream(hub().jsm);
    const { outbox, pub, d } = fixture({ keys: { ensureKey: () => Promise.reject(new Error('the state bucket is not open yet')) } });
    writeLocal(bus.root, 'signed');
    const chunk = outbox.scan(Date.now()).map((p) => ({ ...p, signer: { node: 'ann', keyId: 'k1' } }));
    expect(await publishChunk(d, chunk)).toEqual({ missing: false });
    expect(d.status.lastError).toBe('publish keys: the state bucket is not open yet');
    expect(await streamCount()).toBe(0);
    expect(outbox.scan(Date.now())).toHaveLength(1);
    pub.close();
  });
});

describe('CursorSaver', () => {
  it('writes a changed cursor at once when idle, at most every 2 s during a burst, and for certain at close', async () => {
    let t = 1_000_000;
    const outbox = { cursor: { since: 1, dirs: { _broadcast: 10 } } as Cursor, cursorChanged: true };
    const errs: Error[] = [];
    const saver = new CursorSaver(bus.root, outbox, () => t, (e) => errs.push(e));
    saver.save(true);
    await saver.idle();
    expect(readCursor(bus.root)?.dirs._broadcast).toBe(10);
    expect(outbox.cursorChanged).toBe(false);
    outbox.cursor.dirs._broadcast = 20;
    outbox.cursorChanged = true;
    t += 1_000;
    saver.save(false);
    await saver.idle();
    expect(readCursor(bus.root)?.dirs._broadcast).toBe(10);
    expect(outbox.cursorChanged).toBe(true);
    t += 1_000;
    saver.save(false);
    await saver.idle();
    expect(readCursor(bus.root)?.dirs._broadcast).toBe(20);
    outbox.cursor.dirs._broadcast = 30;
    await saver.close();
    expect(readCursor(bus.root)?.dirs._broadcast).toBe(30);
    expect(errs).toEqual([]);
  });
});

describe('OutboundLoop', () => {
  it('publishes what is written, holds it while the hub is away (counted as backlog), and writes the cursor when it stops', async () => {
    await ensureStream(hub().jsm);
    const { outbox, pub, cursor } = fixture();
    const loop = new OutboundLoop({ root: bus.root, host: 'alpha', now: Date.now, outbox });
    const board = new StatusBoard(bus.root, Date.now, { pid: process.pid, host: 'alpha', hub: hub().url, parked: 0 }, () => loop.backlog);
    board.status.connected = true;
    let stopping = false;
    let idle = 0;
    let repairs = 0;
    const running = loop.run({ pub, keys: { ensureKey: async () => {} }, board, repair: () => repairs++, idle: async () => void idle++, trace: null, stopping: () => stopping });
    try {
      writeLocal(bus.root, 'first');
      await waitFor(() => board.status.published === 1, { what: 'the first publish' });
      await waitFor(() => idle > 0, { what: 'an idle round' });
      // The hub goes away: what is written waits, and says so.
      board.status.connected = false;
      writeLocal(bus.root, 'held');
      await waitFor(() => loop.backlog === 1, { what: 'the backlog' });
      expect(board.status.published).toBe(1);
      board.status.connected = true;
      loop.wake.wake();
      await waitFor(() => board.status.published === 2, { what: 'the held message' });
      expect(await streamCount()).toBe(2);
      expect(loop.backlog).toBe(0);
      // In a channel directory made after the loop started, too.
      writeLocal(bus.root, 'in ops', { kind: 'channel', name: 'ops' });
      await waitFor(() => board.status.published === 3, { what: 'the channel message' });
      expect(repairs).toBe(0);
    } finally {
      stopping = true;
      loop.wake.wake();
      await running;
      pub.close();
    }
    const saved = JSON.parse(readFileSync(join(bus.root, 'relay', 'cursor.json'), 'utf8')) as Cursor;
    expect(saved).toEqual(cursor);
    expect(Object.keys(saved.dirs).sort()).toEqual(['@ops', '_broadcast']);
  });

  it('a message written among many directories is found by a look at its own directory, not at every one', async () => {
    await ensureStream(hub().jsm);
    const { outbox, pub } = fixture();
    for (let i = 0; i < 30; i++) writeLocal(bus.root, `filler ${i}`, { kind: 'channel', name: `d${i}` });
    const looks: (number | 'all')[] = [];
    const scan = outbox.scan.bind(outbox);
    outbox.scan = (now, only) => {
      const found = scan(now, only);
      if (found.length > 0) looks.push(only === undefined ? 'all' : only.size);
      return found;
    };
    const loop = new OutboundLoop({ root: bus.root, host: 'alpha', now: Date.now, outbox });
    const board = new StatusBoard(bus.root, Date.now, { pid: process.pid, host: 'alpha', hub: hub().url, parked: 0 }, () => loop.backlog);
    board.status.connected = true;
    let stopping = false;
    let idle = 0;
    const running = loop.run({ pub, keys: { ensureKey: async () => {} }, board, repair: () => {}, idle: async () => void idle++, trace: null, stopping: () => stopping });
    try {
      await waitFor(() => board.status.published === 30, { what: 'the fillers' });
      await waitFor(() => idle > 0, { what: 'an idle round' });
      looks.length = 0;
      writeLocal(bus.root, 'in d7', { kind: 'channel', name: 'd7' });
      await waitFor(() => board.status.published === 31, { what: 'the message in @d7' });
      // Found by a round that looked at @d7 alone (the poll, which looks everywhere, is 10 s off).
      expect(looks).toEqual([1]);
      expect(await streamCount()).toBe(31);
    } finally {
      stopping = true;
      loop.wake.wake();
      await running;
      pub.close();
    }
  });
});
