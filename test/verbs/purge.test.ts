// `attend purge`: a channel's history goes, except what a live member has not been shown.
import { describe, expect, it } from 'vitest';
import { writeSignal } from '../../tools/bus/store/messages.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import { type TempBus, runInProcess, useTempBus } from '../helpers/temp-bus.js';
import { signalsIn } from '../helpers/signals.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

const ops = () => signalsIn(bus.root, '@ops').map((s) => s.file);
// The person: whoever runs the tests (issue 14 §6: never $USER).
const human = () => ({ ...bus.env });

async function ok(args: string[], env: Record<string, string>, cwd?: string): Promise<string> {
  const r = await runInProcess(args, { env, ...(cwd ? { cwd } : {}) });
  // A send may say who will not see it yet; nothing else belongs on stderr.
  expect(r.stderr.split('\n').filter((l) => l && !/^attend: (delivery|nobody else is live|waits for|at its next turn|held)/.test(l))).toEqual([]);
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

describe('attend purge', () => {
  it('removes what every live member was shown and keeps what one has not been', async () => {
    const a = session();
    await ok(['join', 'ops'], a.env, a.cwd);
    for (let i = 0; i < 5; i++) await ok(['send', '--channel', 'ops', `first ${i}`], human());
    // a's turn ends: the drain shows it all five and records them in its ledger.
    const drained = await runInProcess(['inbox', '--drain', '--format', 'plain'], { env: a.env, cwd: a.cwd });
    expect(drained.stdout).toContain('first 4');
    for (let i = 0; i < 2; i++) await ok(['send', '--channel', 'ops', `second ${i}`], human());
    expect(ops()).toHaveLength(7);

    const r = JSON.parse(await ok(['purge', '#ops', '--json'], human())) as { removed: number; kept: number; heldBy: string[] };
    expect(r).toEqual({ channel: 'ops', removed: 5, kept: 2, heldBy: [a.sessionId] });
    expect(ops()).toHaveLength(2);

    // Once a has been shown the rest, nothing holds them.
    const later = await runInProcess(['inbox', '--drain', '--format', 'plain'], { env: a.env, cwd: a.cwd });
    expect(later.stdout).toContain('second 1');
    const again = JSON.parse(await ok(['purge', 'ops', '--json'], human())) as { removed: number; kept: number };
    expect(again).toMatchObject({ removed: 2, kept: 0 });
    expect(ops()).toHaveLength(0);
  });

  it('a live member with no ledger keeps what a cold start would still deliver', async () => {
    const a = session();
    await ok(['join', 'ops'], a.env, a.cwd);
    // An hour-old message (older than any cold start delivers) and a fresh one.
    const old = createIdFactory({ now: () => Date.now() - 3600_000, pid: 1, random: Math.random })();
    writeSignal(bus.root, { kind: 'channel', name: 'ops' }, old, { from: 'external:aaron', project: 'p', cwd: '/p', fromKind: 'human', fromId: 'aaron', to: '#ops', body: 'old news' });
    await ok(['send', '--channel', 'ops', 'fresh'], human());
    const r = JSON.parse(await ok(['purge', 'ops', '--json'], human())) as { removed: number; kept: number };
    expect(r).toMatchObject({ removed: 1, kept: 1 });
    expect(ops()).not.toContain(`${old}.signal`);
  });

  it('an agent that is not a member is refused (exit 4); an unknown channel is not found (exit 1); nothing removed', async () => {
    const a = session();
    const b = session();
    await ok(['join', 'ops'], a.env, a.cwd);
    await ok(['send', '--channel', 'ops', 'keep me'], human());
    const refused = await runInProcess(['purge', 'ops'], { env: b.env, cwd: b.cwd });
    expect(refused.exitCode).toBe(4);
    const unknown = await runInProcess(['purge', 'nope'], { env: human() });
    expect(unknown.exitCode).toBe(1);
    const bad = await runInProcess(['purge', '../x'], { env: human() });
    expect(bad.exitCode).toBe(2);
    expect(ops()).toHaveLength(1);
  });
});
