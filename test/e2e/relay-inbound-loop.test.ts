// The inbound loops over a real hub and a real bus: what the consumers deliver is written
// here (through the real Importer), a consumer the hub lost is made again and consuming
// resumes, a restart after a reconnect picks up again, what each import means for the status
// and routing (pure), and the backlog figure.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headers } from '@nats-io/transport-node';
import { type JsMsg, jetstream } from '@nats-io/jetstream';
import { type TempBus, useTempBus, waitFor } from '../helpers/bus.js';
import { useHub } from '../helpers/hub.js';
import { readKnownEntries } from '../../tools/bus/presence/names.js';
import { HubRepair } from '../../tools/relay/hub.js';
import { Importer } from '../../tools/relay/importer.js';
import { InboundBacklog, InboundLoops, importOutcomes } from '../../tools/relay/inbound-loop.js';
import { StatusBoard } from '../../tools/relay/status-board.js';
import { ImportedSet } from '../../tools/relay/store.js';
import { STREAM_NAME } from '../../tools/relay/subjects.js';
import { createIdFactory } from '../../tools/wire/ids.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
const hub = useHub();
const newId = createIdFactory({ now: Date.now, pid: process.pid + 1, random: Math.random });

/** A broadcast from alpha's ann, published as alpha's relay would; its id. */
async function fromAlpha(body: string): Promise<string> {
  const id = newId();
  const h = headers();
  h.set('Nats-Msg-Id', `${id}:bcast`);
  h.set('Attend-Id', id);
  h.set('Attend-Origin', 'alpha');
  await jetstream(hub().nc).publish('attend.v1.alpha.bcast', new TextEncoder().encode(`external:ann@pts/1|work|/work|from_kind:human|from_id:ann|to:*|${body}\n`), { headers: h });
  return id;
}

const arrived = (id: string) => existsSync(join(bus.root, 'signals', '_broadcast', `${id}.signal`));

function bravo() {
  const status = new StatusBoard(bus.root, Date.now, { pid: process.pid, host: 'bravo', hub: hub().url, parked: 0 }, () => 0).status;
  const senders = new Map<string, string>();
  const logs: string[] = [];
  const state = { keyKnown: () => false, nodeSigns: () => false, claim: () => null, dissolved: () => null, fetchKeys: async () => {} };
  const importer = new Importer({ root: bus.root, self: 'bravo', imported: new ImportedSet(bus.root), now: Date.now, state, trace: null, ...importOutcomes({ root: bus.root, status, senders, host: 'bravo', now: Date.now, log: (l) => logs.push(l) }) });
  return { status, senders, logs, importer };
}

describe('InboundLoops', () => {
  it('writes what the consumers deliver; after a reconnect, a consumer the hub lost is made again and consuming resumes', async () => {
    const repair = new HubRepair(hub().jsm, 'bravo', () => false);
    expect(await repair.ensure()).toBe(true);
    const { status, senders, importer } = bravo();
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    let stopping = false;
    let repairs = 0;
    // A lone server, as the relay judges it: the slow heartbeat (10 s), so what ends a pull
    // below is the hub's own news, not two missed heartbeats.
    const loops = new InboundLoops({ js: jetstream(hub().nc), host: 'bravo', importer, status, repair: () => (repairs++, repair.repair()), ready: Promise.resolve(), stopping: () => stopping, stopped, clustered: () => false });
    const running = loops.start();
    expect(running).toHaveLength(3);
    try {
      const first = await fromAlpha('hello bravo');
      // The file lands before the batch is acked and counted.
      await waitFor(() => arrived(first) && status.imported === 1, { what: 'the first import' });
      expect(senders.get('alpha:ann')).toBe('alpha');
      // The hub lost the consumer and the connection came back (run.ts restarts the loops on
      // a reconnect): the loop finds it missing, asks for the repair, and goes on.
      await hub().jsm.consumers.delete(STREAM_NAME, 'attend-bravo-bcast');
      loops.restart();
      await waitFor(() => repairs > 0, { timeoutMs: 15_000, what: 'a repair asked for' });
      expect(status.lastError).toMatch(/^consume bcast: consumer (not found|deleted)/);
      const second = await fromAlpha('after the repair');
      await waitFor(() => arrived(second) && status.imported === 2, { timeoutMs: 15_000, what: 'an import after the repair' });
      // The consumer made again starts from the stream's start: the first is a duplicate here.
      await waitFor(() => status.duplicates >= 1, { what: 'the redelivered first message' });

      // Deleted under a live connection, with no reconnect: the pull's long wait is not
      // waited out; the iterator's own news (the consumer deleted) ends it and the loop asks
      // for the repair, well before two slow heartbeats (20 s) could have been missed.
      const before = repairs;
      await hub().jsm.consumers.delete(STREAM_NAME, 'attend-bravo-bcast');
      await waitFor(() => repairs > before, { timeoutMs: 10_000, what: 'a repair asked for without a reconnect' });
      const third = await fromAlpha('after a deletion under a live connection');
      await waitFor(() => arrived(third) && status.imported === 3, { timeoutMs: 15_000, what: 'an import after the second repair' });
    } finally {
      stopping = true;
      stop();
      loops.restart();
      await Promise.all(running);
      await importer.idle();
    }
  });
});

describe('importOutcomes', () => {
  it('counts each outcome, remembers where a written sender lives (as this machine names it) and that it is known, logs a parked one', () => {
    const status = new StatusBoard(bus.root, () => 5, { pid: 1, host: 'bravo', hub: 'h', parked: 0 }, () => 0).status;
    const senders = new Map<string, string>();
    const logs: string[] = [];
    const o = importOutcomes({ root: bus.root, status, senders, host: 'bravo', now: () => 7, log: (l) => logs.push(l) });
    const m = (subject: string) => ({ subject }) as JsMsg;
    o.onResult(m('attend.v1.alpha.bcast'), 'written', { id: 'ann', kind: 'human', origin: '/home/ann' });
    o.onResult(m('attend.v1.alpha.bcast'), 'written', { id: '00000000-0000-4000-8000-000000000001', kind: 'agent', origin: '/srv/api' });
    o.onResult(m('attend.v1.alpha.bcast'), 'duplicate', undefined);
    o.onResult(m('attend.v1.bravo.bcast'), 'own', undefined);
    o.onResult(m('attend.v1.alpha.chan.ops'), { reason: 'malformed' }, undefined);
    expect(status).toMatchObject({ imported: 2, duplicates: 1, parked: 1, lastContact: 7 });
    expect([...senders]).toEqual([['alpha:ann', 'alpha'], ['00000000-0000-4000-8000-000000000001', 'alpha']]);
    // Known from its messages (issue 21 item 1): addressable while alpha is offline.
    expect(readKnownEntries(bus.root)).toMatchObject({
      'alpha:ann': { kind: 'human', name: 'ann', origin: '/home/ann', host: 'alpha' },
      '00000000-0000-4000-8000-000000000001': { kind: 'agent', origin: '/srv/api', host: 'alpha' },
    });
    expect(logs).toEqual(['attend relay: parked attend.v1.alpha.chan.ops: malformed']);
    o.onError(new Error('no space left on the device (ENOSPC)'));
    expect(status.lastError).toBe('import: no space left on the device (ENOSPC)');
  });
});

describe('InboundBacklog', () => {
  it('sums the consumers\' pending counts, asking at most every 5 s; keeps the last figure while the hub is away', async () => {
    expect(await new HubRepair(hub().jsm, 'bravo', () => false).ensure()).toBe(true);
    const status = new StatusBoard(bus.root, Date.now, { pid: 1, host: 'bravo', hub: 'h', parked: 0 }, () => 0).status;
    let t = 1_000_000;
    const backlog = new InboundBacklog(hub().jsm, 'bravo', status, () => t);
    await fromAlpha('one');
    await fromAlpha('two');
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(2);
    expect(status.lastContact).toBe(1_000_000);
    await fromAlpha('three');
    t += 4_000;
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(2);
    t += 1_000;
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(3);
    await hub().jsm.streams.delete(STREAM_NAME);
    t += 5_000;
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(3);
    expect(status.lastContact).toBe(1_005_000);
  });

  it('at rest (nought, nothing imported or failed since) asks only every 30 s; a figure above nought makes it every 5 s again', async () => {
    expect(await new HubRepair(hub().jsm, 'charlie', () => false).ensure()).toBe(true);
    const status = new StatusBoard(bus.root, Date.now, { pid: 1, host: 'charlie', hub: 'h', parked: 0 }, () => 0).status;
    let t = 2_000_000;
    const backlog = new InboundBacklog(hub().jsm, 'charlie', status, () => t);
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(0);
    await fromAlpha('while charlie rests');
    t += 5_000;
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(0);
    t += 25_000;
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(1);
    // Not nought any more: every 5 s again.
    await fromAlpha('another');
    t += 5_000;
    await backlog.refresh();
    expect(status.inboundBacklog).toBe(2);
  });
});
