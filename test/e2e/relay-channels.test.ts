// Channels are one channel across machines (issue 13): three bus roots stand in for three
// machines, each with a real `attend relay`, on one real nats-server. Members (with their
// hosts), descriptions, invitations and kicks travel; a join on another machine gets the
// same backlog rule as a local one; a dissolve travels, and a late message for the
// dissolved channel is parked there, never bringing its directory back.

import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connect, headers } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { type FakeSession, runBin, waitFor, ME } from '../helpers/bus.js';
import { type Machine, useRelayWorld } from '../helpers/relay.js';
import { readChannels } from '../../tools/bus/channels/membership.js';
import { remoteMembers } from '../../tools/bus/presence/remote.js';
import { listParked } from '../../tools/relay/store.js';
import { createIdFactory } from '../../tools/wire/ids.js';

const world = useRelayWorld();
// The transport, not permissions: under the default a session of another machine is in no
// local group (test/e2e/relay-groups.test.ts), so these machines run the family policy.
const machine = (host: string) => world.machine(host, { family: true });
const session = world.session;
const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });

function run(s: FakeSession, args: string[]) {
  const r = runBin(args, { env: s.env, cwd: s.cwd });
  expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

interface Row {
  name: string;
  description: string;
  members: { id: string; name: string; host: string | null; kind: string }[];
}

function channel(m: Machine, name: string): Row | undefined {
  const r = runBin(['channels', '--json'], { env: m.bus.env });
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { channels: Row[] }).channels.find((c) => c.name === name);
}

const T = { timeoutMs: 20_000 };

describe('attend relay: one channel across machines', () => {
  it('members with hosts, description, invitation backlog, kick and dissolve travel; a late message does not resurrect the channel', async () => {
    const [a, b, c] = [machine('alpha'), machine('bravo'), machine('charlie')];
    const ant = session(a, 'ant');
    const bee = session(b, 'bee');
    const cat = session(c, 'cat');
    await Promise.all([a.startRelay(), b.startRelay(), c.startRelay()]);
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).some((m) => m.id === cat.sessionId) && remoteMembers(c.bus.root, Date.now()).some((m) => m.id === ant.sessionId), { ...T, what: 'presence' });

    // alpha: ant makes #ops, joins it and says two things before anyone else is in.
    run(ant, ['channels', 'create', 'ops', 'deploys']);
    run(ant, ['join', 'ops']);
    const first = run(ant, ['send', '--channel', 'ops', 'first']).stdout.trim();
    const second = run(ant, ['send', '--channel', 'ops', 'second']).stdout.trim();

    // bravo lists #ops with alpha's member, shown with its host, and the description.
    const seen = await waitFor(() => {
      const row = channel(b, 'ops');
      return row?.members.some((m) => m.id === ant.sessionId && m.host === 'alpha' && m.name === 'ant@alpha') && row;
    }, { ...T, what: "ant@alpha in #ops at bravo" });
    expect(seen.description).toBe('deploys');

    // bee joins on bravo without an invitation: as a local join, nothing is owed.
    const plain = JSON.parse(run(bee, ['join', 'ops', '--json']).stdout) as { created: boolean; invited: unknown };
    expect(plain).toMatchObject({ created: false, invited: null });
    for (const m of [a, c]) {
      await waitFor(() => channel(m, 'ops')?.members.some((x) => x.id === bee.sessionId && x.host === 'bravo' && x.name === 'bee@bravo'), { ...T, what: `bee@bravo at ${m.host}` });
    }
    // A member describes it on bravo: the newer description wins everywhere.
    run(bee, ['channels', 'describe', 'ops', 'deploys and incidents']);
    await waitFor(() => channel(a, 'ops')?.description === 'deploys and incidents' && channel(c, 'ops')?.description === 'deploys and incidents', { ...T, what: 'the description everywhere' });

    // ant invites cat on charlie; cat's join there takes up the invitation and is owed the
    // backlog, read from charlie's own copy of the channel, exactly as a local invitee is.
    await waitFor(() => c.ids('@ops').includes(second), { ...T, what: "#ops's messages at charlie" });
    // cat's presence crosses on its own schedule (on change, looked at every 2 s): ant
    // invites whom it can see.
    await waitFor(() => (JSON.parse(run(ant, ['peers', '--json']).stdout) as { peers: { id: string; host: string | null }[] }).peers.some((p) => p.id === cat.sessionId && p.host === 'charlie'), { ...T, what: 'cat@charlie live at alpha' });
    run(ant, ['invite', 'charlie:cat', 'ops']);
    await waitFor(() => readChannels(c.bus.root).channels.ops?.invites[cat.sessionId], { ...T, what: 'the invitation at charlie' });
    const invited = JSON.parse(run(cat, ['join', 'ops', '--json']).stdout) as { invited: { by: string; owed: number } | null };
    expect(invited.invited).toMatchObject({ by: ant.sessionId, owed: 2 });
    const drain = run(cat, ['inbox', '--drain', '--format', 'plain']).stdout;
    expect(drain).toContain('first');
    expect(drain).toContain('second');
    expect(drain).toContain(first);
    // Taken up: the invitation is gone on alpha too, and cat is a member there, from charlie.
    await waitFor(() => {
      const ops = readChannels(a.bus.root).channels.ops;
      return ops && !ops.invites[cat.sessionId] && ops.members[cat.sessionId]?.host === 'charlie';
    }, { ...T, what: 'cat a member at alpha' });

    // A kick on alpha reaches the member on bravo.
    run(ant, ['kick', bee.sessionId, 'ops']);
    await waitFor(() => readChannels(b.bus.root).channels.ops && !readChannels(b.bus.root).channels.ops!.members[bee.sessionId], { ...T, what: 'bee dropped at bravo' });
    expect(JSON.parse(run(bee, ['channels', '--joined', '--json']).stdout).channels.map((r: Row) => r.name)).toEqual(['open']);

    // The creator dissolves it: gone everywhere, with its history.
    run(ant, ['dissolve', 'ops', '--force']);
    for (const m of [b, c]) {
      await waitFor(() => !readChannels(m.bus.root).channels.ops && !existsSync(join(m.bus.root, 'signals', '@ops')), { ...T, what: `#ops dissolved at ${m.host}` });
      expect(channel(m, 'ops')).toBeUndefined();
    }
    // A late message for it (written on charlie before the dissolve reached it, published
    // after): parked with the reason at alpha and bravo, the directory never made again.
    const late = newId();
    const nc = await connect({ servers: world.url() });
    try {
      const h = headers();
      h.set('Attend-Id', late);
      h.set('Attend-Origin', 'charlie');
      await jetstream(nc).publish('attend.v1.charlie.chan.ops', new TextEncoder().encode(`external:${ME}@pts/2|w|/w|from_kind:human|from_id:${ME}|to:#ops|too late\n`), { headers: h });
    } finally {
      await nc.close();
    }
    for (const m of [a, b]) {
      const p = await waitFor(() => listParked(m.bus.root).find((x) => x.id === late), { ...T, what: `the late message parked at ${m.host}` });
      expect(p.reason).toMatch(/#ops was dissolved/);
      expect(existsSync(join(m.bus.root, 'signals', '@ops'))).toBe(false);
      expect(readChannels(m.bus.root).channels.ops).toBeUndefined();
    }
  });
});
