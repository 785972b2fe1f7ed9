// A mailbox across machines (issue 21 item 1, "across machines"): a party of another machine,
// known from its presence or from its messages, is left a message while that machine is
// offline; the sender is told the hub holds it, and the relay delivers it when the machine
// is back. Two bus roots stand in for two machines, each with a real `attend relay`, on one
// real nats-server.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ME, runBin, waitFor } from '../helpers/bus.js';
import { useRelayWorld } from '../helpers/relay.js';
import { remoteMembers } from '../../tools/bus/presence/remote.js';
import { attendKey } from '../../tools/wire/names.js';

const world = useRelayWorld();

describe('a message for a party of a machine that is offline', () => {
  it('is held by the hub, the sender is told so, and it is delivered once when the machine returns', async () => {
    // The hub's mailbox, not permissions: a declared agent (no lineage) posts to #open under family.
    const [alpha, bravo] = [world.machine('alpha', { family: true }), world.machine('bravo', { family: true })];
    const bee = world.session(bravo, 'bee');
    await Promise.all([alpha.startRelay(), bravo.startRelay()]);
    await waitFor(() => remoteMembers(alpha.bus.root, Date.now()).some((m) => m.id === bee.sessionId), { timeoutMs: 15_000, what: "bee in alpha's remote roster" });
    // A declared agent on bravo (never in a roster: it only sends) is known to alpha from its message alone.
    const codexCwd = join(bravo.bus.dir, 'work', 'codex');
    mkdirSync(codexCwd, { recursive: true });
    const codex = { env: { ...bravo.bus.env, ATTEND_AGENT: 'codex', ATTEND_AGENT_ID: 'x1' }, cwd: codexCwd };
    const hello = runBin(['send', 'codex here, anyone?'], codex);
    expect(hello.exitCode, hello.stderr).toBe(0);
    await waitFor(() => alpha.ids('_broadcast').includes(hello.stdout.trim()), { timeoutMs: 15_000, what: "codex's broadcast at alpha" });

    // bravo goes offline the orderly way: its relay says goodbye, and alpha forgets its roster.
    await bravo.stopRelay();
    await waitFor(() => !remoteMembers(alpha.bus.root, Date.now()).some((m) => m.host === 'bravo'), { timeoutMs: 15_000, what: 'bravo gone from alpha' });

    const toBee = runBin(['send', '--to', 'bee', 'bee, the parser is yours', '--json'], { env: alpha.bus.env });
    expect(toBee.exitCode, toBee.stderr).toBe(0);
    expect(JSON.parse(toBee.stdout).delivery).toEqual([{ id: bee.sessionId, name: 'bee@bravo', kind: 'agent', reach: { word: 'held', by: 'the hub until bravo is back' } }]);
    expect(toBee.stderr).toBe('attend: held for bee@bravo by the hub until bravo is back\n');
    const toCodex = runBin(['send', '--to', `bravo:codex.x1@${ME}`, 'codex, yes: me'], { env: alpha.bus.env });
    expect(toCodex.exitCode, toCodex.stderr).toBe(0);
    expect(toCodex.stderr).toBe(`attend: held for codex.x1@${ME}@bravo by the hub until bravo is back\n`);
    // alpha's relay publishes both to the hub while bravo is away.
    await waitFor(() => ((alpha.status()?.published as number) ?? 0) >= 2, { timeoutMs: 15_000, what: 'both published by alpha' });
    expect(bravo.ids(attendKey(bee.cwd))).toEqual([]);

    // bravo is back: its durable consumer gets what the hub kept, once.
    await bravo.startRelay();
    const beeMsg = JSON.parse(toBee.stdout).id as string;
    await waitFor(() => bravo.ids(attendKey(bee.cwd)).includes(beeMsg), { timeoutMs: 15_000, what: "the message in bee's tray on bravo" });
    await waitFor(() => bravo.ids(attendKey(codexCwd)).includes(toCodex.stdout.trim()), { timeoutMs: 15_000, what: "the message in codex's tray on bravo" });
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: bee.env, cwd: bee.cwd });
    expect(drain.exitCode, drain.stderr).toBe(0);
    expect(drain.stdout.split('bee, the parser is yours').length - 1).toBe(1);
    const codexDrain = runBin(['inbox', '--drain', '--format', 'plain'], codex);
    expect(codexDrain.exitCode, codexDrain.stderr).toBe(0);
    expect(codexDrain.stdout.split('codex, yes: me').length - 1).toBe(1);
  });
});
