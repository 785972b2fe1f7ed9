// attend across machines (issue 13): three bus roots stand in for three machines, each with
// a real `attend relay` process, all on one real nats-server. Broadcast, channel and
// directed traffic arrive exactly once, with the same ids, and reach a session's drain.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeSession, fakeSession, runBin, waitFor } from '../helpers/bus.js';
import { type NatsServer, startNats } from '../helpers/nats.js';
import { type Machine, makeMachine } from '../helpers/relay.js';
import { writeSignal } from '../../tools/bus/signals.js';
import { remoteMembers } from '../../tools/bus/remote.js';
import { attendKey } from '../../tools/wire/names.js';
import { createIdFactory } from '../../tools/wire/ids.js';

let nats: NatsServer;
const machines: Machine[] = [];
const sessions: FakeSession[] = [];
const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });

beforeAll(async () => {
  nats = await startNats();
});
afterAll(async () => {
  await nats?.stop();
});
afterEach(async () => {
  for (const m of machines.splice(0)) {
    await m.stopRelay();
    m.bus.cleanup();
  }
  for (const s of sessions.splice(0)) s.kill();
});

function machine(host: string): Machine {
  const m = makeMachine(host, () => nats.url);
  machines.push(m);
  return m;
}

function session(m: Machine, opts: { name?: string } = {}): FakeSession {
  const s = fakeSession(m.bus, opts);
  sessions.push(s);
  return s;
}

const human = (m: Machine, to: string, body: string) => ({ from: `external:${m.host}-user@pts/1`, project: 'work', cwd: '/work', fromKind: 'human' as const, fromId: `${m.host}-user`, to, body });

describe('attend relay: traffic between machines', () => {
  it('broadcast, channel and directed messages arrive once at the right machines with the same ids', async () => {
    const [a, b, c] = [machine('alpha'), machine('bravo'), machine('charlie')];
    const bee = session(b, { name: 'bee' });
    await Promise.all([a.startRelay(), b.startRelay(), c.startRelay()]);
    // Presence: alpha learns bee is on bravo.
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).find((m) => m.id === bee.sessionId && m.host === 'bravo'), { timeoutMs: 15_000, what: 'bee in alpha\'s remote roster' });

    const sent = runBin(['send', 'hello every machine'], { env: a.bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const bcastId = sent.stdout.trim();
    const chanId = newId();
    writeSignal(a.bus.root, { kind: 'channel', name: 'ops.team' }, chanId, human(a, '#ops.team', 'deploying now'));
    const key = attendKey(bee.cwd);
    const directId = newId();
    writeSignal(a.bus.root, { kind: 'tray', key }, directId, human(a, bee.sessionId, 'bee, take the parser'));

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
    expect(drain.stdout.split('[1 message, tester, #open').length - 1).toBe(1);
    const again = runBin(['inbox', '--drain', '--format', 'plain'], { env: bee.env, cwd: bee.cwd });
    expect(again.stdout).not.toContain('bee, take the parser');

    // A reply from bravo travels back; nothing echoes (the loop guard): alpha still holds one
    // copy of its own broadcast and bravo never republished what it imported.
    const back = runBin(['send', 'hello from bravo'], { env: b.bus.env });
    const backId = back.stdout.trim();
    await waitFor(() => a.ids('_broadcast').includes(backId) && c.ids('_broadcast').includes(backId), { timeoutMs: 15_000, what: 'bravo\'s broadcast at alpha and charlie' });
    expect(a.ids('_broadcast').sort()).toEqual([bcastId, backId].sort());
    const st = b.status()!;
    expect(st.published).toBe(1);
  });
});
