// Reading by id (issue #10 §11): a node reads what it receives and what it sent; the human
// who owns the bus may read everything, and the output says so.

import { describe, expect, it } from 'vitest';
import { type TempBus, runInProcess, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
const run = (env: Record<string, string>, ...args: string[]) => runInProcess(args, { env });

describe('inbox <id>', () => {
  it('an agent cannot read another session’s direct message; its sender and addressee can; the owner can, and is told', async () => {
    const alpha = session({ name: 'alpha' });
    const beta = session({ name: 'beta' });
    const eve = session({ name: 'eve' });
    const dm = (await run(alpha.env, 'send', '--to', 'beta', 'for beta only')).stdout.trim();
    const byEve = await run(eve.env, 'inbox', dm);
    expect(byEve.exitCode).toBe(1);
    expect(byEve.stdout).toBe('');
    expect(byEve.stderr).toContain(`message ${dm} was not found among the messages you receive`);
    expect((await run(eve.env, 'inbox', '--thread', dm)).exitCode).toBe(1);
    // Nor can it thread a reply under it.
    expect((await run(eve.env, 'reply', '--re', dm, 'sneaky')).exitCode).toBe(1);
    for (const who of [alpha, beta]) {
      const r = await run(who.env, 'inbox', dm, '--json');
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: dm, body: 'for beta only', access: who === alpha ? 'sent' : 'received' });
    }
    const owner = await run(bus.env, 'inbox', dm);
    expect(owner.exitCode).toBe(0);
    expect(owner.stdout).toContain('for beta only');
    expect(owner.stdout).toContain('note: read as the owner of this bus; it was not sent to you');
  });
});
