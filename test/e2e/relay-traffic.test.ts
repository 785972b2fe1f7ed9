// attend across machines (issue 13): three bus roots stand in for three machines, each with
// a real `attend relay` process, all on one real nats-server. Broadcast, channel and
// directed traffic arrive exactly once, with the same ids, and reach a session's drain.

import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ME, runBin, waitFor } from '../helpers/bus.js';
import { type Machine, useRelayWorld } from '../helpers/relay.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { remoteMembers } from '../../tools/bus/presence/remote.js';
import { attendKey } from '../../tools/wire/names.js';
import { createIdFactory } from '../../tools/wire/ids.js';

const world = useRelayWorld();
// The transport, not permissions: under the default a session of another machine is in no
// local group (test/e2e/relay-groups.test.ts), so these machines run the family policy.
const machine = (host: string) => world.machine(host, { family: true });
const session = world.session;
const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });

const human = (m: Machine, to: string, body: string) => ({ from: `external:${m.host}-user@pts/1`, project: 'work', cwd: '/work', fromKind: 'human' as const, fromId: `${m.host}-user`, to, body });

describe('attend relay: traffic between machines', () => {
  it('broadcast, channel and directed messages arrive once at the right machines with the same ids', async () => {
    const [a, b, c] = [machine('alpha'), machine('bravo'), machine('charlie')];
    const bee = session(b, 'bee');
    await Promise.all([a.startRelay(), b.startRelay(), c.startRelay()]);
    // Presence: alpha learns bee is on bravo.
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).find((m) => m.id === bee.sessionId && m.host === 'bravo'), { timeoutMs: 15_000, what: 'bee in alpha\'s remote roster' });

    const sent = runBin(['send', 'hello every machine'], { env: a.bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const bcastId = sent.stdout.trim();
    const chanId = newId();
    writeSignal(a.bus.root, { kind: 'channel', name: 'ops.team' }, chanId, human(a, '#ops.team', 'deploying now'));
    const key = attendKey(bee.cwd);
    // Directed, from a session on alpha to bee on bravo, addressed with the host.
    const ant = session(a, 'ant');
    const direct = runBin(['send', '--to', 'bravo:bee', 'bee, take the parser'], { env: ant.env, cwd: ant.cwd });
    expect(direct.exitCode, direct.stderr).toBe(0);
    const directId = direct.stdout.trim();
    for (const m of [b, c]) {
      await waitFor(() => m.ids('_broadcast').includes(bcastId) && m.ids('@ops.team').includes(chanId), { timeoutMs: 15_000, what: `broadcast and channel at ${m.host}` });
    }
    await waitFor(() => b.ids(key).includes(directId), { timeoutMs: 15_000, what: 'the directed message at bravo' });
    // The same bytes, the same id, one file each; nothing directed reached charlie.
    for (const m of [b, c]) {
      expect(m.ids('_broadcast')).toEqual([bcastId]);
      expect(m.ids('@ops.team')).toEqual([chanId]);
      expect(readFileSync(join(m.bus.root, 'signals', '_broadcast', `${bcastId}.signal`), 'utf8')).toBe(readFileSync(join(a.bus.root, 'signals', '_broadcast', `${bcastId}.signal`), 'utf8'));
    }
    expect(c.ids(key)).toEqual([]);
    // The session on bravo gets both through its Stop hook, once.
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: bee.env, cwd: bee.cwd });
    expect(drain.exitCode, drain.stderr).toBe(0);
    expect(drain.stdout.split('bee, take the parser').length - 1).toBe(1);
    // alpha's human is alpha's, never bravo's own person of the same name (issue 13: the remote identity rule).
    expect(drain.stdout.split(`[1 message, ${ME}@alpha, #open`).length - 1, drain.stdout).toBe(1);
    const again = runBin(['inbox', '--drain', '--format', 'plain'], { env: bee.env, cwd: bee.cwd });
    expect(again.stdout).not.toContain('bee, take the parser');

    // bee replies: it goes back to ant's tray on alpha, threaded, with the same ids.
    await waitFor(() => remoteMembers(b.bus.root, Date.now()).find((m) => m.id === ant.sessionId), { timeoutMs: 15_000, what: 'ant in bravo\'s remote roster' });
    const reply = runBin(['reply', '--re', directId, 'on it'], { env: bee.env, cwd: bee.cwd });
    expect(reply.exitCode, reply.stderr).toBe(0);
    const replyId = reply.stdout.trim();
    const antKey = attendKey(ant.cwd);
    await waitFor(() => a.ids(antKey).includes(replyId), { timeoutMs: 15_000, what: 'the reply in ant\'s tray on alpha' });
    const antDrain = runBin(['inbox', '--drain', '--format', 'plain'], { env: ant.env, cwd: ant.cwd });
    expect(antDrain.stdout.split('on it').length - 1).toBe(1);
    expect(readFileSync(join(a.bus.root, 'signals', antKey, `${replyId}.signal`), 'utf8')).toContain(`|re:${directId}|`);
    expect(c.ids(antKey)).toEqual([]);

    // A broadcast from bravo travels to both others; nothing echoes (the loop guard): alpha
    // holds its own broadcast once, and bravo published only what it wrote itself.
    const back = runBin(['send', 'hello from bravo'], { env: b.bus.env });
    const backId = back.stdout.trim();
    await waitFor(() => a.ids('_broadcast').includes(backId) && c.ids('_broadcast').includes(backId), { timeoutMs: 15_000, what: 'bravo\'s broadcast at alpha and charlie' });
    expect(a.ids('_broadcast').sort()).toEqual([bcastId, backId].sort());
    // The reply and the broadcast; the imported messages were never published again.
    const st = await waitFor(() => { const v = b.status()!; return (v.published as number) >= 2 && v; }, { what: 'bravo\'s status' });
    expect(st.published).toBe(2);
  });
});

describe('attend relay: addressing and presence across machines', () => {
  it('peers shows remote members with their host; a name on two hosts is refused with the qualified candidates; a stopped relay\'s sessions leave', async () => {
    const [a, b, c] = [machine('alpha'), machine('bravo'), machine('charlie')];
    const [beeB, beeC] = [session(b, 'bee'), session(c, 'bee')];
    await Promise.all([a.startRelay(), b.startRelay(), c.startRelay()]);
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).filter((m) => m.name === 'bee').length === 2, { timeoutMs: 15_000, what: 'both bees at alpha' });
    const peers = runBin(['peers', '--json'], { env: a.bus.env });
    const rows = (JSON.parse(peers.stdout) as { peers: { id: string; host: string | null; name: string }[] }).peers;
    expect(rows.filter((r) => r.name === 'bee').map((r) => [r.host, r.id]).sort()).toEqual([['bravo', beeB.sessionId], ['charlie', beeC.sessionId]]);
    const table = runBin(['peers'], { env: a.bus.env });
    expect(table.stdout).toMatch(/^Name\s+Host\s+Kind/);
    expect(table.stdout).toMatch(/bee\s+bravo\s+agent/);

    const clash = runBin(['send', '--to', 'bee', 'which one?'], { env: a.bus.env });
    expect(clash.exitCode).toBe(2);
    expect(clash.stderr).toMatch(/^attend: 'bee' is ambiguous: .*bravo:bee.*charlie:bee|charlie:bee.*bravo:bee/);
    expect(a.ids(attendKey(beeB.cwd))).toEqual([]);
    const qualified = runBin(['send', '--to', 'charlie:bee', 'you'], { env: a.bus.env });
    expect(qualified.exitCode, qualified.stderr).toBe(0);
    await waitFor(() => c.ids(attendKey(beeC.cwd)).includes(qualified.stdout.trim()), { timeoutMs: 15_000, what: 'the qualified send at charlie' });

    // bravo's relay dies without a goodbye: its bee leaves alpha's peers within the TTL (2 s here).
    await b.killRelay();
    await waitFor(() => !remoteMembers(a.bus.root, Date.now()).some((m) => m.host === 'bravo'), { timeoutMs: 15_000, what: 'bravo gone from alpha' });
    const after = runBin(['send', '--to', 'bee', 'now only one'], { env: a.bus.env });
    expect(after.exitCode, after.stderr).toBe(0);
  });
});
