// The small things a user notices (issue #10), through the CLI in-process.

import { describe, expect, it } from 'vitest';
import { type TempBus, runInProcess, useTempBus } from '../helpers/temp-bus.js';
import { signalsIn } from '../helpers/signals.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
const run = (args: string[], env = bus.env) => runInProcess(args, { env });

describe('the CLI’s small things', () => {
  it('channels create/describe/pin/unpin --json print JSON', async () => {
    expect(JSON.parse((await run(['channels', 'create', 'ops', 'x', '--json'])).stdout)).toEqual({ channel: 'ops', description: 'x', pinned: true });
    expect(JSON.parse((await run(['channels', 'describe', 'ops', 'y', '--json'])).stdout)).toEqual({ channel: 'ops', description: 'y', changed: true });
    expect(JSON.parse((await run(['channels', 'unpin', 'ops', '--json'])).stdout)).toEqual({ channel: 'ops', pinned: false });
    expect(JSON.parse((await run(['channels', 'pin', 'ops', '--json'])).stdout)).toEqual({ channel: 'ops', pinned: true });
  });

  it('bare attend prints its help to stdout and exits 0', async () => {
    const r = await run([]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Usage: attend /);
    expect(r.stderr).toBe('');
  });

  it('--channel twice, --format or --trace without --drain, and a bogus --format are usage errors', async () => {
    for (const args of [
      ['send', '--channel', 'a', '--channel', 'b', 'x'],
      ['inbox', '--format', 'plain'],
      ['inbox', '--trace'],
      ['inbox', '--drain', '--format', 'bogus'],
    ]) {
      const r = await run(args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^attend: .*\n$/);
    }
    expect(signalsIn(bus.root, '_broadcast')).toEqual([]);
  });

  it('--on-behalf-of resolves a live display name to its id and carries any other valid id as given', async () => {
    const lead = session({ name: 'lead' });
    await run(['send', '--on-behalf-of', 'lead', 'on behalf of a name']);
    await run(['send', '--on-behalf-of', 'someone-not-live', 'on behalf of an id']);
    expect(signalsIn(bus.root, '_broadcast').map((s) => s.env.onBehalfOf)).toEqual([lead.sessionId, 'someone-not-live']);
  });
});
