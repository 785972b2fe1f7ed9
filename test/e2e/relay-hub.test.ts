// hub.ts against a real nats-server: the stream and this host's consumers are made when
// missing and left alone when there, a repair makes them again after the hub lost them,
// connection events reach the relay, and creds files are read in both forms.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { createUser } from '@nats-io/nkeys';
import { type TempBus, useTempBus, waitFor } from '../helpers/bus.js';
import { useHub } from '../helpers/hub.js';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { HubRepair, MAX_MSG_BYTES, authenticatorFrom, checkDue, connectHub, ensureConsumers, ensureStream, retry, watchConnection } from '../../tools/relay/hub.js';
import { STREAM_NAME } from '../../tools/relay/subjects.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
const hub = useHub();

async function consumerNames(): Promise<string[]> {
  const out: string[] = [];
  for await (const c of hub().jsm.consumers.list(STREAM_NAME)) out.push(c.name);
  return out.sort();
}

describe('ensureStream, ensureConsumers', () => {
  it('make the stream and the three durables when missing, and leave them when there', async () => {
    const { jsm } = hub();
    await ensureStream(jsm);
    const info = await jsm.streams.info(STREAM_NAME);
    expect(info.config).toMatchObject({ subjects: ['attend.v1.>'], max_msg_size: MAX_MSG_BYTES, deny_delete: true, deny_purge: true });
    await ensureConsumers(jsm, 'alpha');
    expect(await consumerNames()).toEqual(['attend-alpha-bcast', 'attend-alpha-chan', 'attend-alpha-tray']);
    const tray = await jsm.consumers.info(STREAM_NAME, 'attend-alpha-tray');
    expect(tray.config.filter_subject).toBe('attend.v1.*.tray.alpha.*');
    // Again: nothing made twice, nothing replaced.
    await ensureStream(jsm);
    await ensureConsumers(jsm, 'alpha');
    expect((await jsm.streams.info(STREAM_NAME)).created).toBe(info.created);
    expect((await jsm.consumers.info(STREAM_NAME, 'attend-alpha-tray')).created).toBe(tray.created);
  });

  it('a consumer of a stream that is not there is an error, not a consumer made', async () => {
    await expect(ensureConsumers(hub().jsm, 'alpha')).rejects.toThrow();
  });
});

describe('HubRepair', () => {
  it('ensure makes everything; repair makes it again after the hub lost it, one repair at a time', async () => {
    const { jsm } = hub();
    const repair = new HubRepair(jsm, 'bravo', () => false);
    expect(await repair.ensure()).toBe(true);
    expect(await consumerNames()).toHaveLength(3);
    await jsm.streams.delete(STREAM_NAME);
    repair.repair();
    expect(repair.busy).toBe(true);
    repair.repair();
    await waitFor(() => !repair.busy, { what: 'the repair' });
    expect(await consumerNames()).toEqual(['attend-bravo-bcast', 'attend-bravo-chan', 'attend-bravo-tray']);
  });

  it('checks at every tick while something is urgent', async () => {
    const { jsm } = hub();
    let checks = 0;
    const repair = new HubRepair(jsm, 'bravo', () => false, { onView: () => checks++ });
    expect(await repair.ensure()).toBe(true);
    const start = checks;
    repair.every(30, 60_000, () => true);
    try {
      await waitFor(() => checks >= start + 3, { what: 'checks while urgent' });
    } finally {
      repair.close();
    }
  });

  it('ensure gives up once the relay is stopping and the hub cannot be reached', async () => {
    const nc = await connect({ servers: hub().url });
    const jsm = await jetstreamManager(nc);
    await nc.close();
    expect(await new HubRepair(jsm, 'bravo', () => true).ensure()).toBe(false);
  });
});

describe('checkDue', () => {
  it('every tick while something is off; at rest, once restMs (less half a tick) passed', () => {
    expect(checkDue(0, false, 5_000, 30_000)).toBe(true);
    expect(checkDue(5_000, true, 5_000, 30_000)).toBe(false);
    expect(checkDue(27_400, true, 5_000, 30_000)).toBe(false);
    expect(checkDue(27_500, true, 5_000, 30_000)).toBe(true);
    expect(checkDue(Number.POSITIVE_INFINITY, true, 5_000, 30_000)).toBe(true);
  });
});

describe('retry', () => {
  it('tries until it works, or until stopped after a failure', async () => {
    let n = 0;
    expect(await retry(async () => (++n < 2 ? Promise.reject(new Error('not yet')) : 'done'), () => false)).toBe('done');
    expect(n).toBe(2);
    expect(await retry(() => Promise.reject(new Error('never')), () => true)).toBeNull();
  });
});

describe('connectHub and watchConnection', () => {
  let own: NatsServer | undefined;
  afterEach(async () => {
    await own?.stop();
    own = undefined;
  });

  it('reports a lost connection and its return, and every event after', async () => {
    own = await startNats();
    const nc = await connectHub({ server: own.url, servers: [own.url], host: 'alpha' }, 'attend-test');
    const seen: string[] = [];
    let after = 0;
    watchConnection(nc, { disconnect: () => seen.push('disconnect'), reconnect: () => seen.push('reconnect'), after: () => after++ });
    try {
      await own.kill();
      await waitFor(() => seen.includes('disconnect'), { what: 'the disconnect' });
      await own.restart();
      await waitFor(() => seen.includes('reconnect'), { timeoutMs: 20_000, what: 'the reconnect' });
      expect(seen.slice(0, 2)).toEqual(['disconnect', 'reconnect']);
      expect(after).toBeGreaterThanOrEqual(2);
    } finally {
      await nc.close();
    }
  });
});

describe('authenticatorFrom', () => {
  it('reads an nkey seed file (as hub-config writes it) and a user JWT creds file; anything else is refused', () => {
    const seed = join(bus.dir, 'alpha.creds');
    writeFileSync(seed, `# attend relay credentials for host alpha\n${new TextDecoder().decode(createUser().getSeed())}\n`);
    expect(typeof authenticatorFrom(seed)).toBe('function');
    const jwt = join(bus.dir, 'user.creds');
    writeFileSync(jwt, `-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.sig\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(createUser().getSeed())}\n------END USER NKEY SEED------\n`);
    expect(typeof authenticatorFrom(jwt)).toBe('function');
    const junk = join(bus.dir, 'junk.creds');
    writeFileSync(junk, 'hello\n');
    expect(() => authenticatorFrom(junk)).toThrow(/neither a user JWT nor an nkey user seed/);
  });
});
