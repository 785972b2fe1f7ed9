// Reads never write (issue #12 §4): a listing leaves every state file as it was — so it
// wakes no sensor — unless something actually changed.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../tools/identity/system.js';
import { type TempBus, runInProcess, useTempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

/** Every file under the bus root with its mtime and size. */
function snapshot(dir = bus.root): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) Object.assign(out, snapshot(p));
    else out[p] = `${st.mtimeMs}:${st.size}`;
  }
  return out;
}

describe('reads never write', () => {
  it('channels, peers, status and inbox leave every file as it was', async () => {
    const a = session({ name: 'alpha' });
    session({ name: 'beta' });
    await runInProcess(['join', 'ops'], { env: a.env });
    await runInProcess(['send', '--channel', 'ops', 'hello'], { env: bus.env });
    // Let every first-time write happen (registry slots, the shown mark), then look.
    for (const args of [['channels'], ['peers'], ['status'], ['inbox']]) await runInProcess(args, { env: a.env });
    const before = snapshot();
    for (const args of [['channels'], ['channels', '--json'], ['peers', '--json'], ['status', '--json'], ['inbox'], ['inbox', '--json']]) {
      const r = await runInProcess(args, { env: a.env });
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(snapshot(), args.join(' ')).toEqual(before);
    }
  });

  it('a listing that finds a dead member prunes it: a write, because something changed', async () => {
    const a = session({ name: 'alpha' });
    const b = session({ name: 'beta' });
    await runInProcess(['join', 'ops'], { env: a.env });
    await runInProcess(['join', 'ops'], { env: b.env });
    b.kill();
    await waitFor(() => !processAlive(b.pid), { what: 'beta to exit' });
    const file = join(bus.root, 'state', 'channels.json');
    // The file's text, not its mtime: two writes within one kernel clock tick share an mtime.
    const before = readFileSync(file, 'utf8');
    expect(before).toContain(b.sessionId);
    const r = JSON.parse((await runInProcess(['channels', '--json'], { env: a.env })).stdout) as { channels: { name: string; memberCount: number }[] };
    expect(r.channels.find((c) => c.name === 'ops')?.memberCount).toBe(1);
    expect(readFileSync(file, 'utf8')).not.toContain(b.sessionId);
  });
});
