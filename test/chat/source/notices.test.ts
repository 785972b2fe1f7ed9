// What the chat's source says on the status line (tools/chat/source/notices.ts), on a real
// temporary bus: unreadable files counted once each, unreadable directories named, and
// messages the gate holds kept off the screen and said why.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMessage, silentReporter } from '../../../tools/bus/store/index.js';
import { createNotices } from '../../../tools/chat/source/notices.js';
import { ME, type TempBus, runInProcess, useTempBus } from '../../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function notices() {
  const said: string[] = [];
  return { said, n: createNotices({ root: bus.root, reader: { id: ME, kind: 'human', user: ME }, status: (t) => said.push(t) }) };
}

describe('chat notices', () => {
  it('counts each unreadable file once and names an unreadable directory', () => {
    const { said, n } = notices();
    n.reporter.skip('/bus/signals/_broadcast/a.signal', 'not a signal line');
    n.reporter.skip('/bus/signals/_broadcast/a.signal', 'not a signal line');
    n.reporter.skip('/bus/signals/@ops/b.signal', 'too large');
    n.reporter.unreadable?.('/bus/signals/@ops', 'a symbolic link');
    expect(said).toEqual([
      '1 unreadable file skipped (latest: _broadcast/a.signal: not a signal line)',
      '2 unreadable files skipped (latest: @ops/b.signal: too large)',
      'cannot read signals/@ops: a symbolic link; its messages are not shown',
    ]);
  });

  it('admits what the gate passes; under a policy that does not parse holds everything and says why', async () => {
    const id = (await runInProcess(['send', 'hello'], { env: bus.env })).stdout.trim();
    const m = readMessage(bus.root, { kind: 'open' }, id, silentReporter);
    expect(m?.body).toBe('hello');
    const ok = notices();
    expect(ok.n.admit(m)).toBe(true);
    expect(ok.n.admit(null)).toBe(false);
    expect(ok.said).toEqual([]);
    writeFileSync(join(bus.root, 'policy.json'), '{"version": 1,\n "open": "nobody"}\n');
    const broken = notices();
    expect(broken.n.admit(m)).toBe(false);
    expect(broken.n.admit(m)).toBe(false);
    expect(broken.said).toHaveLength(1);
    expect(broken.said[0]).toMatch(/^the policy did not parse, so nothing is delivered: .*policy\.json:2: open: /);
  });
});
