// Fan-out against live sessions (issue #12 §3): N sessions, each with its own `attend run`,
// one broadcast at a time to #open; the time until the last sensor printed its header line,
// and every sensor's CPU at rest. The ratio is per sensor, against one session: flat means
// no per-message work that grows with the number of sessions.

import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { busLib, fakeSession, person, pct, startSensor } from './latency.mjs';

function cpuTicks(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(x[11]) + Number(x[12]);
  } catch {
    return 0;
  }
}


export async function measure(bin, tmp, n, rounds, restSeconds) {
  const sessions = [];
  const sensors = [];
  try {
    for (let i = 0; i < n; i++) sessions.push(fakeSession(tmp, `fan-${n}-${i}`));
    for (const s of sessions) sensors.push(startSensor(bin, s));
    for (const sensor of sensors) await sensor.ready(120_000);
    await new Promise((r) => setTimeout(r, 1_000 + n * 20));
    const { writeSignal, createIdFactory } = await busLib(bin);
    const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
    const root = sessions[0].root;
    const broadcast = async (r) => {
      const id = newId();
      const from = sensors.map((s) => s.state.out.length);
      const t0 = performance.now();
      writeSignal(root, { kind: 'open' }, id, { from: `external:${person}@pts-1`, project: 'b', cwd: '/b', fromKind: 'human', fromId: person, to: '*', body: `fan-out ${r}` });
      const ts = await Promise.all(sensors.map((s, i) => s.waitFor(`id=${id}]`, from[i], 60_000)));
      return Math.max(...ts) - t0;
    };
    // The first message after every sensor started is reported on its own: each sensor runs
    // the delivery code for the first time then (V8 compiles it, ~2 ms per sensor).
    const first = await broadcast(-1);
    const lastLine = [];
    for (let r = 0; r < rounds; r++) lastLine.push(await broadcast(r));
    lastLine.sort((a, b) => a - b);
    const c0 = sensors.map((s) => cpuTicks(s.proc.pid));
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, restSeconds * 1000));
    const wall = (performance.now() - t0) / 1000;
    const ticks = sensors.reduce((sum, s, i) => sum + cpuTicks(s.proc.pid) - c0[i], 0);
    // The machine's 1-minute load average at the end of the size's run: on a shared machine the
    // tail is other processes' as much as the sensors'.
    return { n, first, p50: pct(lastLine, 50), p99: pct(lastLine, 99), restCpu: (ticks / 100 / wall) * 100, load: loadavg()[0] };
  } finally {
    // Wait for every sensor to be gone: one still stopping recreates its tray under the
    // removal of the temporary bus.
    await Promise.all(sensors.map((s) => new Promise((r) => (s.proc.exitCode !== null || s.proc.signalCode !== null ? r() : (s.proc.once('exit', r), s.proc.kill('SIGTERM'))))));
    for (const s of sessions) s.proc.kill('SIGKILL');
  }
}

export default async function ({ bin, tmp, quick }) {
  const sizes = quick ? [1, 10] : [1, 10, 50, 100];
  const rounds = quick ? 10 : 100;
  const rows = [];
  for (const n of sizes) rows.push(await measure(bin, tmp, n, rounds, quick ? 5 : 15));
  const base = rows[0];
  return {
    title: 'Fan-out against live sessions',
    markdown: [
      `N live sessions, each with its own \`attend run\`; ${rounds} broadcasts to #open one at a time, timed until the last sensor printed the message's header, after one first broadcast that is reported on its own (the first delivery after all N sensors started, when each runs the delivery code for the first time). CPU at rest is the sum over all N sensors (share of one core). Goals (issue #12 §3): with 100 sessions, p99 ≤ 250 ms and total CPU at rest ≤ 5 % of a core.`,
      '',
      `The last column is the machine's 1-minute load average when the size's run ended (${cpus().length} cores): on a shared machine a tail measured under load is the other processes' as much as the sensors'.`,
      '',
      '| sessions | first broadcast after start | last sensor p50 | last sensor p99 | p99 per session vs 1 | all sensors at rest | load average |',
      '|---|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.n} | ${r.first.toFixed(1)} ms | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${((r.p99 / r.n) / base.p99).toFixed(2)}× | ${r.restCpu.toFixed(2)} % | ${r.load.toFixed(1)} |`),
    ].join('\n'),
  };
}
