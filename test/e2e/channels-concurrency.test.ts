// The membership store never loses an update (issue #3 §2): 40 real processes with different
// identities join and leave at once; the final membership is exactly what they imply.

import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { readChannels } from '../../tools/bus/channels/membership.js';
import { BIN, ME, type TempBus, runInProcess, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

function runAsync(args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BIN, ...args], { env, cwd: bus.home, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

it('40 concurrent join/leave processes with different identities lose no update', async () => {
  // Thirty identities besides the ten joining sessions: the person (0) and sessions (one
  // person per Unix user: no variable makes another, issue 14 §6).
  const others = Array.from({ length: 30 }, (_, i) => (i === 0 ? null : session()));
  const user = (i: number) => others[i]?.env ?? bus.env;
  const idOf = (i: number) => others[i]?.sessionId ?? ME;
  // Before the race: 20..29 are in #room.
  for (let i = 20; i < 30; i++) expect((await runInProcess(['join', 'room'], { env: user(i) })).exitCode).toBe(0);
  const agents = Array.from({ length: 10 }, () => {
    const s = session();
    return s;
  });
  const ops: Promise<{ code: number; stderr: string }>[] = [];
  for (let i = 0; i < 20; i++) ops.push(runAsync(['join', 'room'], user(i)));
  for (let i = 20; i < 30; i++) ops.push(runAsync(['leave', '#room'], user(i)));
  agents.forEach((a, i) => ops.push(runAsync(['join', i < 5 ? 'room' : 'room2'], a.env)));
  expect(ops).toHaveLength(40);
  const results = await Promise.all(ops);
  for (const r of results) expect(r.code, r.stderr).toBe(0);

  const store = readChannels(bus.root);
  const expectedRoom = [...Array.from({ length: 20 }, (_, i) => idOf(i)), ...agents.slice(0, 5).map((a) => a.sessionId)].sort();
  expect(JSON.stringify(Object.keys(store.channels.room?.members ?? {}).sort())).toEqual(JSON.stringify(expectedRoom));
  expect(Object.keys(store.channels.room2?.members ?? {}).sort()).toEqual(agents.slice(5).map((a) => a.sessionId).sort());
  expect(store.channels.room?.members[ME]?.kind).toBe('human');
  expect(store.channels.room?.members[agents[0]!.sessionId]?.kind).toBe('agent');
});
