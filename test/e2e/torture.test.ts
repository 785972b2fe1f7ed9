// Torture: 8 writer processes × 250 messages over #open, a channel and three sessions' trays,
// while each session runs a real sensor and is drained again and again by real processes.
// Every message a session should receive must surface to it exactly once across both
// conduits. Then again with sensors SIGKILLed at random moments and restarted: nothing is
// lost, and a repeat is allowed only for a message a killed sensor had in flight.

import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { attendKey } from '../../tools/wire/names.js';
import { BIN, ME, fakeSession, makeTempBus, type FakeSession, type TempBus, waitFor } from '../helpers/bus.js';
import { headerIds, join, startSensor, type SensorProc, traceIds } from '../helpers/delivery.js';

const WRITERS = 8;
const PER_WRITER = 250;
const dist = (p: string) => pathToFileURL(new URL(`../../dist/tools/${p}`, import.meta.url).pathname).href;

let bus: TempBus;
let A: FakeSession;
let B: FakeSession;
let C: FakeSession;

beforeAll(() => {
  bus = makeTempBus();
  A = fakeSession(bus, { name: 'alpha' });
  B = fakeSession(bus, { name: 'bravo' });
  // C shares A's origin, so A's tray holds C's mail too: A must not receive it.
  C = fakeSession(bus, { cwd: A.cwd, name: 'charlie' });
  join(bus.root, 'ops', A.sessionId);
  join(bus.root, 'ops', B.sessionId);
});
afterAll(() => {
  for (const s of [A, B, C]) s.kill();
  bus.cleanup();
});

interface Written {
  id: string;
  target: 'open' | 'ops' | 'A' | 'B' | 'C';
}

/** One writer process: the bus library's own write path, with a pause between messages. */
function writer(n: number, pauseMs: number): Promise<Written[]> {
  const script = `
    const { writeSignal } = await import(${JSON.stringify(dist('bus/store/messages.js'))});
    const { createIdFactory } = await import(${JSON.stringify(dist('wire/ids.js'))});
    const [root, a, b, c, keyA, keyB, n, per, pause, person] = process.argv.slice(1);
    const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
    const targets = [
      ['open', { kind: 'open' }, '*'],
      ['ops', { kind: 'channel', name: 'ops' }, '#ops'],
      ['A', { kind: 'tray', key: keyA }, a],
      ['B', { kind: 'tray', key: keyB }, b],
      ['C', { kind: 'tray', key: keyA }, c],
    ];
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    for (let i = 0; i < Number(per); i++) {
      const [name, scope, to] = targets[(i + Number(n)) % targets.length];
      const id = newId();
      // The person's lines (issue 20: the only person a line on this bus can be from).
      writeSignal(root, scope, id, { from: 'external:' + person + '@pts-' + n, project: 'p', cwd: '/p', fromKind: 'human', fromId: person, to, body: 'msg ' + i + ' from writer ' + n });
      process.stdout.write(id + ' ' + name + '\\n');
      if (Number(pause) > 0 && Math.random() < 0.5) await sleep(Math.random() * Number(pause) * 2);
    }
  `;
  const args = [bus.root, A.sessionId, B.sessionId, C.sessionId, attendKey(A.cwd), attendKey(B.cwd), String(n), String(PER_WRITER), String(pauseMs), ME];
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  // 'close', not 'exit': a writer can exit before its last lines reach this process, and a
  // message it wrote but that was not counted here reads as delivered to the wrong session.
  return new Promise((resolve, reject) =>
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`writer ${n} exited ${code}`));
      resolve(
        out
          .trim()
          .split('\n')
          .map((l) => {
            const [id, target] = l.split(' ');
            return { id: id!, target: target as Written['target'] };
          }),
      );
    }),
  );
}

interface Surfaced {
  ids: string[];
  /** Per id, the sensor instance (index) or -1 for a drain, in the order they surfaced. */
  by: Map<string, number[]>;
}

function drainOnce(s: FakeSession): Promise<{ stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [BIN, 'inbox', '--drain', '--format', 'plain', '--trace'], { env: s.env, cwd: s.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stdin.end('{}');
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => proc.on('close', () => resolve({ stdout, stderr })));
}

const expectedFor = (who: 'A' | 'B' | 'C', all: Written[]) =>
  all.filter((w) => w.target === 'open' || w.target === who || (w.target === 'ops' && who !== 'C')).map((w) => w.id);

async function round(opts: { pauseMs: number; kill: boolean }) {
  const sessions = { A, B, C };
  const names = ['A', 'B', 'C'] as const;
  const sensors: Record<string, SensorProc[]> = { A: [], B: [], C: [] };
  const killed = new Set<SensorProc>();
  const drained: Record<string, { stdout: string; stderr: string }[]> = { A: [], B: [], C: [] };
  for (const n of names) sensors[n]!.push(startSensor(sessions[n].env, ['--trace'], sessions[n].cwd));
  // A sensor prints nothing on start (issue #11 §7): its claim says it is up.
  for (const n of names) await waitFor(() => readSensor(bus.root, sessions[n].sessionId)?.pid === sensors[n]![0]!.proc.pid, { what: `sensor ${n}` });

  let writing = true;
  const drainLoops = names.map(async (n) => {
    while (writing) drained[n]!.push(await drainOnce(sessions[n]));
  });
  const killLoops = opts.kill
    ? names.map(async (n) => {
        while (writing) {
          await new Promise((r) => setTimeout(r, 150 + Math.random() * 450));
          const cur = sensors[n]!.at(-1)!;
          cur.proc.kill('SIGKILL');
          killed.add(cur);
          await cur.exited;
          sensors[n]!.push(startSensor(sessions[n].env, ['--trace'], sessions[n].cwd));
        }
      })
    : [];
  const written = (await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i, opts.pauseMs)))).flat();
  writing = false;
  await Promise.all([...drainLoops, ...killLoops]);

  const collect = (n: 'A' | 'B' | 'C'): Surfaced => {
    const by = new Map<string, number[]>();
    const add = (id: string, who: number) => by.set(id, [...(by.get(id) ?? []), who]);
    sensors[n]!.forEach((p, i) => [...headerIds(p.stdout()), ...traceIds(p.stderr())].forEach((id) => add(id, i)));
    for (const d of drained[n]!) [...headerIds(d.stdout), ...traceIds(d.stderr)].forEach((id) => add(id, -1));
    return { ids: [...by.keys()], by };
  };
  // The live sensors finish what is still arriving; a last drain would find nothing left.
  for (const n of names) {
    const want = new Set(expectedFor(n, written));
    await waitFor(() => [...want].every((id) => collect(n).by.has(id)), { what: `every message for ${n}`, timeoutMs: 30_000 });
  }
  for (const n of names) drained[n]!.push(await drainOnce(sessions[n]));
  for (const n of names) {
    const last = sensors[n]!.at(-1)!;
    last.proc.kill('SIGTERM');
    await last.exited;
  }

  let repeats = 0;
  for (const n of names) {
    const want = expectedFor(n, written);
    const got = collect(n);
    expect(new Set(got.ids)).toEqual(new Set(want));
    for (const [id, who] of got.by) {
      if (who.length === 1) continue;
      repeats += who.length - 1;
      // A repeat is only a message a killed sensor had in flight: shown, not yet recorded.
      const first = who[0]!;
      expect(first >= 0 && killed.has(sensors[n]![first]!), `${id} repeated for ${n} by ${who.join(',')}`).toBe(true);
    }
  }
  return { written: written.length, repeats, kills: killed.size, drains: names.reduce((a, n) => a + drained[n]!.length, 0) };
}

describe('torture: both conduits under load', () => {
  it('surfaces every message exactly once to each session', async () => {
    const r = await round({ pauseMs: 1, kill: false });
    console.log(`torture: ${r.written} messages, ${r.drains} drains, repeats ${r.repeats}`);
    expect(r.written).toBe(WRITERS * PER_WRITER);
    expect(r.repeats).toBe(0);
  }, 120_000);

  it('loses nothing while sensors are SIGKILLed and restarted; repeats only in flight', async () => {
    const r = await round({ pauseMs: 8, kill: true });
    console.log(`torture with SIGKILL: ${r.written} messages, ${r.kills} kills, ${r.drains} drains, ${r.repeats} repeats (in flight at a kill)`);
    expect(r.written).toBe(WRITERS * PER_WRITER);
    expect(r.kills).toBeGreaterThan(3);
  }, 120_000);
});
