// Groups across machines (issue 20, seed 000 D4): a session of another machine is in no group
// of this one, so under the default (no policy file on either machine) it reaches this
// machine's person and nothing else without a grant; each machine's person grants what enters
// their machine. The person of another machine, verified with that machine's key, is a person.

import { describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { remoteMembers } from '../../tools/bus/presence/remote.js';
import { attendKey } from '../../tools/wire/names.js';
import { ME, runBin, waitFor } from '../helpers/bus.js';
import { useRelayWorld } from '../helpers/relay.js';

const world = useRelayWorld();
const T = { timeoutMs: 15_000 };

describe('attend relay: groups by default across machines', () => {
  it('a session of another machine needs a grant on each side; its person does not', async () => {
    const [a, b] = [world.machine('alpha'), world.machine('bravo')];
    const ant = world.session(a, 'ant');
    const bee = world.session(b, 'bee');
    await Promise.all([a.startRelay(), b.startRelay()]);
    await waitFor(() => remoteMembers(a.bus.root, Date.now()).some((m) => m.id === bee.sessionId), { ...T, what: "bee in alpha's roster" });
    const send = (body: string) => runBin(['send', '--to', 'bravo:bee', body], { env: ant.env, cwd: ant.cwd });
    const drainBee = () => runBin(['inbox', '--drain', '--format', 'plain'], { env: bee.env, cwd: bee.cwd }).stdout;

    // alpha refuses at send, naming the grant its person can make.
    const refused = send('before any grant');
    expect(refused.exitCode).toBe(EXIT.refused);
    // A session id is the same on every machine (docs/cross-machine.md), so grants name it bare.
    expect(refused.stderr).toContain(`no grant from ${ant.sessionId} to ${bee.sessionId} (different groups)`);
    expect(refused.stderr).toContain(`attend allow ${ant.sessionId} ${bee.sessionId}`);
    expect(runBin(['allow', ant.sessionId, bee.sessionId], { env: a.bus.env }).exitCode).toBe(0);

    // It leaves alpha, and bravo holds it: bravo's person has granted nothing.
    const first = send('alpha granted it');
    expect(first.exitCode, first.stderr).toBe(0);
    await waitFor(() => b.ids(attendKey(bee.cwd)).includes(first.stdout.trim()), { ...T, what: 'the message at bravo' });
    expect(drainBee()).not.toContain('alpha granted it');
    const held = JSON.parse(runBin(['inbox', '--held', '--json'], { env: b.bus.env }).stdout).messages as { body: string; held: string }[];
    expect(held).toEqual([expect.objectContaining({ body: 'alpha granted it', held: `refused by policy: no grant from ${ant.sessionId} to ${bee.sessionId} (different groups)` })]);

    // bravo's person grants it as bravo reads it: the next one arrives.
    expect(runBin(['allow', ant.sessionId, bee.sessionId], { env: b.bus.env }).exitCode).toBe(0);
    const second = send('both granted it');
    expect(second.exitCode, second.stderr).toBe(0);
    await waitFor(() => b.ids(attendKey(bee.cwd)).includes(second.stdout.trim()), { ...T, what: 'the second message at bravo' });
    expect(drainBee()).toContain('both granted it');

    // alpha's person is a person on bravo too (verified with alpha's key): it reaches bee.
    const person = runBin(['send', '--to', 'bravo:bee', 'from the person on alpha'], { env: a.bus.env });
    expect(person.exitCode, person.stderr).toBe(0);
    await waitFor(() => b.ids(attendKey(bee.cwd)).includes(person.stdout.trim()), { ...T, what: "alpha's person's message at bravo" });
    expect(drainBee()).toMatch(new RegExp(`from_kind=human from=alpha:${ME} sig=ok [^\\n]*\\n[^\\n]*\\n[^\\n]*from the person on alpha`));
  }, 90_000);
});
