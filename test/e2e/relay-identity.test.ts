// Parties and signatures across machines (issue 13 with issue 14): two bus roots, each with
// a human of the same username (`tester`) and a session, real relays, a real nats-server.
// A human elsewhere is never confused with the local one: it reads as `alpha:tester` and is
// shown `tester@alpha` in peers, inbox, drain and sensor lines; addressing `bravo:tester`
// reaches bravo's tester only. Signatures travel with their messages and verify on the
// other machine (`sig=ok`); a message whose signature fails is parked with the reason.

import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, headers } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { runBin, waitFor, ME } from '../helpers/bus.js';
import { type SensorProc, startSensor } from '../helpers/delivery.js';
import { type Machine, useRelayWorld } from '../helpers/relay.js';
import { readPresence, writePresence } from '../../tools/bus/presence/heartbeats.js';
import { remoteMembers } from '../../tools/bus/presence/remote.js';
import { readRemoteKeys } from '../../tools/bus/trust/remote-keys.js';
import { keysDirOf } from '../helpers/keys.js';
import { listParked } from '../../tools/relay/store.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import { attendKey } from '../../tools/wire/names.js';

const world = useRelayWorld();
// The transport, not permissions: under the default a session of another machine is in no
// local group (test/e2e/relay-groups.test.ts), so these machines run the family policy.
const machine = (host: string) => world.machine(host, { family: true });
const session = world.session;
const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
/** A sensor, stopped after the test before its machine goes. */
function track(p: SensorProc): SensorProc {
  world.defer(async () => {
    p.proc.kill('SIGTERM');
    await p.exited;
  });
  return p;
}

/** As the machine's human (the same username on both). */
function human(m: Machine, args: string[]) {
  const r = runBin(args, { env: m.bus.env });
  expect(r.exitCode, `${m.host}: ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

interface Json {
  id: string;
  fromId: string;
  fromHost?: string;
  to: string;
  sig: string | null;
  body: string;
}

function inbox(m: Machine): Json[] {
  return (JSON.parse(human(m, ['inbox', '--json', '--limit', '100']).stdout) as { messages: Json[] }).messages;
}

const T = { timeoutMs: 20_000 };

describe('attend relay: a human on another machine', () => {
  it('is never the local human of the same username, and is shown with its host everywhere', async () => {
    const [a, b] = [machine('alpha'), machine('bravo')];
    const ant = session(a, 'ant');
    const bee = session(b, 'bee');
    // Both humans are live (a chat open) and sign: each `tester` has a key of its own.
    for (const m of [a, b]) writePresence(m.bus.root, { id: `${ME}`, kind: 'human', origin: m.bus.home, heartbeat: Date.now(), role: 'chat', pid: process.pid });
    await Promise.all([a.startRelay(), b.startRelay()]);
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).some((m) => m.id === bee.sessionId) && remoteMembers(b.bus.root, Date.now()).some((m) => m.id === ant.sessionId), { ...T, what: 'presence' });
    const sensor = track(startSensor(ant.env, [], ant.cwd));
    await waitFor(() => readPresence(a.bus.root).some((r) => r.id === ant.sessionId && r.role === 'sensor'), { ...T, what: "ant's sensor" });

    const fromA = human(a, ['send', 'hello from alpha']).stdout.trim();
    const fromB = human(b, ['send', 'hello from bravo']).stdout.trim();
    // Peers: bravo's tester is listed at alpha with its host and qualified id.
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).some((m) => m.id === `bravo:${ME}`), { ...T, what: "bravo's person in alpha's roster" });
    const peers = (JSON.parse(human(a, ['peers', '--json']).stdout) as { peers: { id: string; name: string; host: string | null; kind: string }[] }).peers;
    expect(peers.filter((p) => p.kind === 'human').map((p) => [p.id, p.host]).sort()).toEqual([[`bravo:${ME}`, 'bravo'], [`${ME}`, null]]);

    // Inbox on bravo: alpha's message is from alpha:tester, verified (its sidecar came with
    // it and alpha's key was recorded); bravo's own is its own tester's.
    await waitFor(() => b.ids('_broadcast').includes(fromA) && a.ids('_broadcast').includes(fromB), { ...T, what: 'both broadcasts both ways' });
    expect(existsSync(join(b.bus.root, 'signals', '_broadcast', `${fromA}.sig`))).toBe(true);
    expect(readRemoteKeys(keysDirOf(b.bus.home), 'alpha', `${ME}`)).toHaveLength(1);
    const atB = inbox(b);
    expect(atB.find((m) => m.id === fromA)).toMatchObject({ fromId: `alpha:${ME}`, fromHost: 'alpha', sig: 'ok' });
    expect(atB.find((m) => m.id === fromB)).toMatchObject({ fromId: `${ME}`, sig: 'ok' });
    expect(atB.find((m) => m.id === fromB)!.fromHost).toBeUndefined();
    const plain = human(b, ['inbox', fromA]).stdout;
    expect(plain).toMatch(new RegExp(String.raw`^from: ${ME}@alpha \(human, alpha:${ME}\) sig=ok$`, 'm'));

    // Answering a human on #open addresses them by id: ant (alpha) answers bravo's tester,
    // then alpha's own. Both travel to bravo; each reaches only its own machine's tester.
    const reply = (re: string, text: string) => {
      const r = runBin(['reply', '--re', re, text], { env: ant.env, cwd: ant.cwd });
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    const idB = reply(fromB, 'for bravo only');
    const idA = reply(fromA, 'for alpha only');
    expect(readFileSync(join(a.bus.root, 'signals', '_broadcast', `${idB}.signal`), 'utf8')).toContain(`|to:bravo:${ME}|`);
    await waitFor(() => b.ids('_broadcast').includes(idB) && b.ids('_broadcast').includes(idA), { ...T, what: 'both answers at bravo' });
    const again = inbox(b);
    expect(again.find((m) => m.id === idB)?.to).toBe(`${ME}`);
    expect(again.find((m) => m.id === idA)?.to).toBe(`alpha:${ME}`);
    expect(human(b, ['inbox', idB]).stdout).toMatch(/^to: you$/m);
    expect(human(b, ['inbox', idA]).stdout).toMatch(new RegExp(String.raw`^to: ${ME}@alpha$`, 'm'));
    // And on alpha, the other way round.
    expect(human(a, ['inbox', idB]).stdout).toMatch(new RegExp(String.raw`^to: ${ME}@bravo$`, 'm'));
    expect(human(a, ['inbox', idA]).stdout).toMatch(/^to: you$/m);
    // Directed: `--to bravo:tester` goes to that human's tray on bravo; `--to tester` is
    // alpha's own and never leaves alpha.
    const direct = runBin(['send', '--to', `bravo:${ME}`, 'direct to bravo'], { env: ant.env, cwd: ant.cwd });
    expect(direct.exitCode, direct.stderr).toBe(0);
    const local = runBin(['send', '--to', `${ME}`, 'direct to alpha'], { env: ant.env, cwd: ant.cwd });
    expect(local.exitCode, local.stderr).toBe(0);
    const bKey = attendKey(b.bus.home);
    await waitFor(() => b.ids(bKey).includes(direct.stdout.trim()), { ...T, what: "the direct message in bravo's person's tray" });
    expect(human(b, ['inbox', direct.stdout.trim()]).stdout).toMatch(/^to: you$/m);
    // And in the listing, which pages by a cache of each tray entry's parties (issue 19).
    expect(inbox(b).find((m) => m.id === direct.stdout.trim())).toMatchObject({ fromId: ant.sessionId, to: `${ME}` });
    expect(a.ids(attendKey(a.bus.home))).toEqual([local.stdout.trim()]);

    // A session's Stop hook on bravo names alpha's human with its host.
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: bee.env, cwd: bee.cwd }).stdout;
    expect(drain).toMatch(new RegExp(String.raw`\[2 messages, ${ME}@alpha and ant@alpha, #open`));
    // ant's sensor on alpha: bravo's human and bravo's session, each with the host.
    const beeSays = runBin(['send', 'bee here'], { env: bee.env, cwd: bee.cwd });
    expect(beeSays.exitCode, beeSays.stderr).toBe(0);
    await waitFor(() => /message from bee@bravo \(agent, to #open\): bee here/.test(sensor.stdout()), { ...T, what: `bee@bravo on ant's sensor:\n${sensor.stdout()}` });
    expect(sensor.stdout()).toMatch(new RegExp(String.raw`message from ${ME}@bravo \(human, to #open\): hello from bravo`));
    expect(sensor.stdout()).toMatch(new RegExp(String.raw`\[attend message from_kind=human from=bravo:${ME} sig=ok to=\* id=`));
  });
});

describe('attend relay: signatures over the relay', () => {
  it('parks a message whose signature fails, with the reason, and never writes it', async () => {
    const [a, b] = [machine('alpha'), machine('bravo')];
    await Promise.all([a.startRelay(), b.startRelay()]);
    const good = human(a, ['send', 'signed on alpha']).stdout.trim();
    await waitFor(() => b.ids('_broadcast').includes(good), { ...T, what: 'the signed message at bravo' });
    const dir = join(a.bus.root, 'signals', '_broadcast');
    const line = readFileSync(join(dir, `${good}.signal`));
    const sidecar = readFileSync(join(dir, `${good}.sig`));
    const forge = (id: string, data: Uint8Array, sig: Uint8Array) => ({ id, data, sig });
    const cases: { c: ReturnType<typeof forge>; reason: RegExp }[] = [
      // Altered: the body changed, the signature kept.
      { c: forge(newId(), Buffer.from(line.toString('utf8').replace('signed on alpha', 'signed on alpha, pay mallory')), sidecar), reason: /bad signature: the signature does not match/ },
      // Another message's sidecar under a new id.
      { c: forge(newId(), line, sidecar), reason: /bad signature: the signature does not match/ },
      // A sidecar naming another host than the one that relayed it.
      { c: forge(newId(), line, Buffer.from(sidecar.toString('utf8').replace('host alpha', 'host bravo'))), reason: /bad signature: signed on host 'bravo' but relayed by 'alpha'/ },
      // Truncated.
      { c: forge(newId(), line, sidecar.subarray(0, 40)), reason: /bad signature: .*sidecar/ },
      // Unsigned, from a node that signs.
      { c: forge(newId(), line, new Uint8Array()), reason: new RegExp(String.raw`bad signature: unsigned, but ${ME} on alpha signs`) },
    ];
    const nc = await connect({ servers: world.url() });
    try {
      const js = jetstream(nc);
      for (const { c } of cases) {
        const h = headers();
        h.set('Attend-Id', c.id);
        h.set('Attend-Origin', 'alpha');
        if (c.sig.length > 0) h.set('Attend-Sig', Buffer.from(c.sig).toString('base64'));
        await js.publish('attend.v1.alpha.bcast', c.data, { headers: h });
      }
    } finally {
      await nc.close();
    }
    await waitFor(() => cases.every(({ c }) => listParked(b.bus.root).some((p) => p.id === c.id)), { ...T, what: 'every forged message parked' });
    const parked = listParked(b.bus.root);
    for (const { c, reason } of cases) expect(parked.find((p) => p.id === c.id)?.reason, c.id).toMatch(reason);
    expect(b.ids('_broadcast')).toEqual([good]);
    expect(JSON.parse(runBin(['relay', 'status', '--json'], { env: b.bus.env }).stdout)).toMatchObject({ rejects: cases.length });
  });
});
