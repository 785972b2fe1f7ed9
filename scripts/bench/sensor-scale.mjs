// The sensor against history (issue #12 §1): with N messages in its receive set against an
// empty bus — cold start and warm resume to the first pending line, inotify watches, RSS at
// rest, CPU per delivered message (the sum of its threads' on-CPU time, ns, from
// /proc/<pid>/task/*/schedstat) and send → line latency at 2 messages/s. Histories are
// written through attend's own writer (file, sync, index line), an hour old.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { busLib, fakeSession, pct, person, rssMiB, startSensor, watches } from './latency.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function cpuNs(pid) {
  let n = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      n += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {}
  }
  return n;
}

/** A sensor as latency.mjs starts it, with when it was spawned and its exit. */
function sensorProc(bin, s) {
  const t0 = performance.now();
  const sensor = startSensor(bin, s);
  return { ...sensor, t0, exited: new Promise((r) => sensor.proc.once('exit', r)), waitFor: (text) => sensor.waitFor(text, 0, 60_000) };
}

/** Cold starts and warm resumes timed per size; their medians are reported. */
const STARTS = 4;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function measure(bin, parent, n) {
  // A bus of its own for each size.
  const tmp = mkdtempSync(join(parent, `sscale-${n}-`));
  const s = fakeSession(tmp, `sscale-${n}`);
  const { writeSignal, createIdFactory } = await busLib(bin);
  // As the bus's person: any other human is a stranger, whose lines are held, never shown (issue 20 §3).
  const env = (body) => ({ from: `external:${person}@pts-1`, project: 'p', cwd: '/p', fromKind: 'human', fromId: person, to: '*', body });
  try {
    let clock = Date.now() - 3_600_000;
    const old = createIdFactory({ now: () => clock, pid: 4343, random: Math.random });
    for (let i = 0; i < n; i++) {
      clock += 1;
      writeSignal(s.root, { kind: 'open' }, old(), env(`history ${i}`));
    }
    const mk = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
    const coldStarts = async () => {
      const out = [];
      for (let r = 0; r < STARTS; r++) {
        rmSync(join(s.root, 'state', 'ledger'), { recursive: true, force: true });
        const first = mk();
        writeSignal(s.root, { kind: 'open' }, first, env('pending at start'));
        const one = sensorProc(bin, s);
        out.push((await one.waitFor(`id=${first}]`)) - one.t0);
        one.proc.kill('SIGTERM');
        await one.exited;
      }
      return median(out);
    };
    // Cold start once a listing made the listing cache of #open (attend inbox, status or the
    // chat, so nearly always): the sensor takes the cold-start window from the cache. Each
    // start leaves one more recent message, and a cold start shows at most DIGEST_THRESHOLD (8)
    // in full, so both kinds together stay at 2 × STARTS.
    execFileSync(process.execPath, [bin, 'inbox'], { env: s.env, cwd: s.cwd, stdio: 'ignore' });
    const coldCached = await coldStarts();
    rmSync(join(s.root, 'cache'), { recursive: true, force: true });
    // Cold start on a bus nobody listed: the sensor walks the names in #open. The median of
    // STARTS (one start is one sample of a noisy machine); the last sensor stays for what
    // follows.
    const colds = [];
    let sensor;
    for (let r = 0; r < STARTS; r++) {
      if (sensor) {
        sensor.proc.kill('SIGTERM');
        await sensor.exited;
      }
      rmSync(join(s.root, 'state', 'ledger'), { recursive: true, force: true });
      const first = mk();
      writeSignal(s.root, { kind: 'open' }, first, env('pending at start'));
      sensor = sensorProc(bin, s);
      colds.push((await sensor.waitFor(`id=${first}]`)) - sensor.t0);
    }
    const cold = median(colds);
    await sleep(2_000);
    const rest = { rss: rssMiB(sensor.proc.pid), watches: watches(sensor.proc.pid) };
    // Delivery at 2 messages/s: latency and CPU per message.
    const lat = [];
    const c0 = cpuNs(sensor.proc.pid);
    const count = 60;
    for (let i = 0; i < count; i++) {
      const id = mk();
      const t0 = performance.now();
      writeSignal(s.root, { kind: 'open' }, id, env(`live ${i}`));
      lat.push((await sensor.waitFor(`id=${id}]`)) - t0);
      await sleep(500);
    }
    const cpuPerMsg = (cpuNs(sensor.proc.pid) - c0) / 1e6 / count;
    sensor.proc.kill('SIGTERM');
    await sensor.exited;
    // Warm resume: the ledger exists; one message arrived while no sensor ran.
    const warms = [];
    for (let r = 0; r < STARTS; r++) {
      const pending = mk();
      writeSignal(s.root, { kind: 'open' }, pending, env('arrived while down'));
      sensor = sensorProc(bin, s);
      warms.push((await sensor.waitFor(`id=${pending}]`)) - sensor.t0);
      sensor.proc.kill('SIGTERM');
      await sensor.exited;
    }
    const warm = median(warms);
    lat.sort((a, b) => a - b);
    return { n, coldNoCache: cold, coldCached, warm, ...rest, cpuPerMsg, p50: pct(lat, 50), p99: pct(lat, 99) };
  } finally {
    s.proc.kill('SIGKILL');
  }
}

export default async function ({ bin, tmp, quick }) {
  const sizes = quick ? [0, 10_000] : [0, 100_000];
  const rows = [];
  for (const n of sizes) rows.push(await measure(bin, tmp, n));
  const base = rows[0];
  const ratio = (r, k) => (r === base ? '' : ` (${(r[k] / base[k]).toFixed(2)}×)`);
  return {
    title: 'The sensor against history',
    markdown: [
      'One session\'s `attend run` with N messages of history on #open, against an empty bus, in one run. Cold start: no ledger, one recent message pending, from spawn to its line; on a bus nobody listed yet (the sensor walks the names in #open), and once a listing (`attend inbox`, `status`, the chat) made the listing cache of #open, when the sensor takes the cold-start window from the cache. Warm resume: the ledger exists, one message arrived while no sensor ran. Each the median of 4 starts. Delivery: 60 messages at 2/s. CPU is the sum of the sensor\'s threads\' on-CPU time. Goals (issue #12 §1) at 100,000 against empty: watches O(directories), RSS at rest ≤ 1.2×, CPU per delivered message ≤ 1.2×, cold start and warm resume ≤ 1.5×, p99 send → line ≤ 100 ms.',
      '',
      '| history | cold start → first line, nothing listed yet | cold start, #open listed before | warm resume → first line | inotify watches | RSS at rest | CPU per delivered message | send → line p50 | p99 |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.n === 0 ? 'empty' : r.n.toLocaleString('en-US')} | ${r.coldNoCache.toFixed(0)} ms${ratio(r, 'coldNoCache')} | ${r.coldCached.toFixed(0)} ms${ratio(r, 'coldCached')} | ${r.warm.toFixed(0)} ms${ratio(r, 'warm')} | ${r.watches} | ${r.rss.toFixed(0)} MiB${ratio(r, 'rss')} | ${r.cpuPerMsg.toFixed(2)} ms${ratio(r, 'cpuPerMsg')} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms |`,
      ),
    ].join('\n'),
  };
}
