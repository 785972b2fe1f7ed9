// attend across machines, hostile and broken input (issue 13): the hub from hub-config
// enforces who may publish as whom, and a relay parks what it must not write, with the
// reason, acked, never in a directory a session reads.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers, nkeyAuthenticator } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { type Machine, makeMachine } from '../helpers/relay.js';
import { runBin, waitFor } from '../helpers/bus.js';
import { writeHubConfig } from '../../tools/relay/hub-config.js';
import { listParked } from '../../tools/relay/store.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { readRemoteRoster } from '../../tools/bus/presence/remote.js';
import { createIdFactory } from '../../tools/wire/ids.js';

let nats: NatsServer | undefined;
const machines: Machine[] = [];
const dirs: string[] = [];
const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });

afterEach(async () => {
  for (const m of machines.splice(0)) {
    await m.stopRelay();
    m.bus.cleanup();
  }
  await nats?.stop();
  nats = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function seedOf(file: string): Uint8Array {
  return new TextEncoder().encode(/^(SU[A-Z2-7]+)$/m.exec(readFileSync(file, 'utf8'))![1]!);
}

describe('attend relay: the hub from hub-config', () => {
  it('relays work with their own credentials, and a host cannot publish as another', async () => {
    const out = mkdtempSync(join(tmpdir(), 'attend-hub-'));
    dirs.push(out);
    const hub = writeHubConfig({ hosts: ['alpha', 'bravo'], out: join(out, 'hub'), listen: '127.0.0.1:4222' });
    nats = await startNats({ config: hub.config });
    const a = makeMachine('alpha', () => nats!.url, { creds: hub.creds.alpha! });
    const b = makeMachine('bravo', () => nats!.url, { creds: hub.creds.bravo! });
    machines.push(a, b);
    await Promise.all([a.startRelay(), b.startRelay()]);
    const sent = runBin(['send', 'with real permissions'], { env: a.bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    await waitFor(() => b.ids('_broadcast').includes(sent.stdout.trim()), { timeoutMs: 15_000, what: 'the broadcast at bravo' });
    // Presence works within the same permissions: each sees the other host.
    await waitFor(() => readRemoteRoster(a.bus.root).hosts.bravo && readRemoteRoster(b.bus.root).hosts.alpha, { timeoutMs: 15_000, what: 'presence both ways' });
    expect(a.relayLog() + b.relayLog()).not.toMatch(/permission|violation/i);

    // alpha's key, publishing under bravo's origin: the server refuses it.
    const nc = await connect({ servers: nats.url, authenticator: nkeyAuthenticator(seedOf(hub.creds.alpha!)), inboxPrefix: '_INBOX_alpha' });
    try {
      const js = jetstream(nc, { timeout: 2_000 });
      const h = headers();
      h.set('Attend-Id', newId());
      h.set('Attend-Origin', 'bravo');
      await expect(js.publish('attend.v1.bravo.bcast', new TextEncoder().encode('external:x@y|p|/c|to:*|forged\n'), { headers: h })).rejects.toThrow(/permission|timeout|no responders/i);
      // A plain publish is not stored either (the allow-list is the write permission).
      nc.publish('attend.v1.bravo.bcast', new TextEncoder().encode('external:x@y|p|/c|to:*|forged core\n'));
      await nc.flush();
      // Nor may alpha speak for bravo's channels or keys in the shared state bucket.
      const kv = await new Kvm(nc).open('attend-state');
      await expect(kv.put('bravo.channels', '{"v":1,"host":"bravo","channels":{},"dissolved":{"forged":{"at":1,"by":"x"}}}', { timeout: 2_000 } as never)).rejects.toThrow(/permission|timeout|no responders/i);
      expect(new TextDecoder().decode((await kv.get('bravo.channels'))?.value ?? new Uint8Array())).not.toContain('forged');
    } finally {
      await nc.close();
    }
    // What the stream holds from "bravo" is only what bravo's relay put there: nothing.
    const admin = await connect({ servers: nats.url, authenticator: nkeyAuthenticator(seedOf(hub.creds.bravo!)), inboxPrefix: '_INBOX_bravo' });
    try {
      const info = await (await jetstreamManager(admin)).streams.info('ATTEND', { subjects_filter: 'attend.v1.bravo.>' });
      expect(info.state.subjects ?? {}).toEqual({});
    } finally {
      await admin.close();
    }
    expect(a.ids('_broadcast')).toEqual([sent.stdout.trim()]);
  });
});

describe('attend relay: bad input is parked', () => {
  it('malformed, oversized, conflicting, misrouted and forged-origin messages are parked with reasons, acked, never written', async () => {
    nats = await startNats();
    const b = makeMachine('bravo', () => nats!.url);
    machines.push(b);
    await b.startRelay();
    const conflictId = newId();
    writeSignal(b.bus.root, { kind: 'open' }, conflictId, { from: 'external:local@pts/0', project: 'p', cwd: '/p', fromKind: 'human', fromId: 'local', to: '*', body: 'the local original' });
    const nc = await connect({ servers: nats.url });
    const line = (to: string, body: string) => new TextEncoder().encode(`external:mallory@pts/9|p|/p|from_kind:human|from_id:mallory|to:${to}|${body}\n`);
    const cases: { subject: string; id: string; origin: string; data: Uint8Array; reason: RegExp }[] = [
      { subject: 'attend.v1.alpha.bcast', id: newId(), origin: 'alpha', data: new TextEncoder().encode('no bars at all\n'), reason: /malformed/ },
      { subject: 'attend.v1.alpha.bcast', id: newId(), origin: 'alpha', data: new Uint8Array(100 * 1024).fill(65), reason: /oversized/ },
      { subject: 'attend.v1.alpha.bcast', id: conflictId, origin: 'alpha', data: line('*', 'a different text under the same id'), reason: /conflict/ },
      { subject: 'attend.v1.alpha.chan.ops', id: newId(), origin: 'alpha', data: line('*', 'claims #open, sent on #ops'), reason: /routing/ },
      { subject: 'attend.v1.alpha.tray.bravo.-srv-app-abc123', id: newId(), origin: 'alpha', data: line('*', 'a broadcast pushed into a tray'), reason: /routing/ },
      { subject: 'attend.v1.alpha.bcast', id: newId(), origin: 'mallory', data: line('*', 'origin header forged'), reason: /origin host/ },
      { subject: 'attend.v1.alpha.bcast', id: '../../etc', origin: 'alpha', data: line('*', 'a path for an id'), reason: /message id/ },
    ];
    try {
      const js = jetstream(nc);
      for (const c of cases) {
        const h = headers();
        h.set('Attend-Id', c.id);
        h.set('Attend-Origin', c.origin);
        await js.publish(c.subject, c.data, { headers: h });
      }
    } finally {
      await nc.close();
    }
    await waitFor(() => listParked(b.bus.root).length >= cases.length, { timeoutMs: 15_000, what: 'every bad message parked' });
    const parked = listParked(b.bus.root);
    expect(parked).toHaveLength(cases.length);
    for (const c of cases) {
      const p = parked.find((x) => x.subject === c.subject && x.id === c.id && c.reason.test(x.reason));
      expect(p, `${c.subject} ${c.reason}`).toBeDefined();
    }
    expect(parked.filter((p) => p.kind === 'conflict')).toHaveLength(1);
    // Nothing reached a directory a session reads; the local original is untouched.
    expect(b.ids('_broadcast')).toEqual([conflictId]);
    expect(readFileSync(join(b.bus.root, 'signals', '_broadcast', `${conflictId}.signal`), 'utf8')).toContain('the local original');
    expect(b.ids('@ops')).toEqual([]);
    expect(b.ids('-srv-app-abc123')).toEqual([]);
    // All acked: the consumers have nothing pending, and status reports them.
    await waitFor(() => b.status()!.inboundBacklog === 0, { timeoutMs: 15_000, what: 'an empty inbound backlog' });
    const st = runBin(['relay', 'status', '--json'], { env: b.bus.env });
    const v = JSON.parse(st.stdout) as { conflicts: number; rejects: number; running: boolean };
    expect(v).toMatchObject({ conflicts: 1, rejects: cases.length - 1, running: true });
    // `attend status` and `attend doctor` say so too.
    expect(runBin(['status'], { env: b.bus.env }).stdout).toMatch(new RegExp(`relay: +connected \\(bravo on nats://127\\.0\\.0\\.1:\\d+\\), ${cases.length} parked`));
    const doctor = JSON.parse(runBin(['doctor', '--json'], { env: b.bus.env }).stdout) as { checks: { name: string; status: string; detail: string }[] };
    expect(doctor.checks.find((c) => c.name === 'relay')).toMatchObject({ status: 'warn', detail: expect.stringContaining(`${cases.length} parked`) });
  });
});
