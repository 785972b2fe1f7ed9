// Scale (issue #12 §8): what each read costs as history grows, as a growth table. Histories
// are written through attend's own writer (writeSignal: the file, its index line), a tenth
// of them replies, on #open. Each verb runs as a process (node start-up included), median
// of a few runs; the ratio is against the 1,000-message bus of the same run. Goal from the
// issue: ≤ 1.5× at 100,000. The sensor rows: inotify watches and RSS at rest after a start.

import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { busLib, fakeSession } from './latency.mjs';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function timeCli(bin, s, args, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: s.cwd, env: s.env, encoding: 'utf8' });
    times.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`attend ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  return median(times);
}

function dirBytes(dir) {
  let n = 0;
  for (const name of readdirSync(dir)) n += statSync(join(dir, name)).blocks * 512;
  return n;
}

function watches(pid) {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
    try {
      n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    } catch {}
  }
  return n;
}

function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function sensorAtRest(bin, s) {
  const proc = spawn(process.execPath, [bin, 'run'], { cwd: s.cwd, env: s.env, stdio: ['ignore', 'pipe', 'ignore'] });
  const claim = join(s.root, 'state', 'sensor', `${encodeURIComponent(s.sessionId)}.pid`);
  const t0 = performance.now();
  for (;;) {
    try {
      statSync(claim);
      break;
    } catch {}
    if (performance.now() - t0 > 60_000) throw new Error('sensor did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  // Settle past the first scan, then read.
  await new Promise((r) => setTimeout(r, 1_500));
  const out = { watches: watches(proc.pid), rss: rssMiB(proc.pid), startMs: performance.now() - t0 - 1_500 };
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  return out;
}

async function measure(bin, tmp, n, runs) {
  const s = fakeSession(tmp, `scale-${n}`);
  const { writeSignal, createIdFactory } = await busLib(bin);
  try {
    let clock = Date.now() - 3_600_000;
    const id = createIdFactory({ now: () => clock, pid: 4343, random: Math.random });
    let last = '';
    let parent = '';
    for (let i = 0; i < n; i++) {
      clock += 1;
      const m = id();
      const re = i % 10 === 9 && parent ? { re: parent } : {};
      writeSignal(s.root, { kind: 'open' }, m, { from: 'external:old@pts-1', project: 'p', cwd: '/p', fromKind: 'human', fromId: 'old', to: '*', body: `history ${i}`, ...re });
      if (i % 10 === 0) parent = m;
      last = m;
    }
    const row = {
      n,
      inbox: timeCli(bin, s, ['inbox'], runs),
      json: timeCli(bin, s, ['inbox', '--json'], runs),
      thread: timeCli(bin, s, ['inbox', '--thread', last], runs),
      status: timeCli(bin, s, ['status', '--json'], runs),
      bytes: dirBytes(join(s.root, 'signals', '_broadcast')) / n,
    };
    Object.assign(row, await sensorAtRest(bin, s));
    return row;
  } finally {
    s.proc.kill('SIGKILL');
  }
}

export default async function ({ bin, tmp, quick }) {
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const runs = quick ? 3 : 5;
  const rows = [];
  for (const n of sizes) rows.push(await measure(bin, tmp, n, runs));
  const base = rows[0];
  const cell = (r, k, unit = 'ms') => `${r[k].toFixed(0)} ${unit}${r === base ? '' : ` (${(r[k] / base[k]).toFixed(2)}×)`}`;
  return {
    title: 'Scale: cost against history',
    markdown: [
      `Each verb as a process on a bus with N messages on #open (median of ${runs}); in brackets the ratio to 1,000 messages. Goal: ≤ 1.5× at 100,000.`,
      '',
      `| messages | inbox | inbox --json | inbox --thread | status | sensor start | sensor inotify watches | sensor RSS at rest | disk per message |`,
      '|---|---|---|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.n.toLocaleString('en')} | ${cell(r, 'inbox')} | ${cell(r, 'json')} | ${cell(r, 'thread')} | ${cell(r, 'status')} | ${cell(r, 'startMs')} | ${r.watches} | ${r.rss.toFixed(0)} MiB${r === base ? '' : ` (${(r.rss / base.rss).toFixed(2)}×)`} | ${r.bytes.toFixed(0)} B |`),
      '',
      'The sensor watches directories (one inotify watch each), so its watches and memory do not follow the history. The listings still read every message of the receive set (issue #12 §2, open): their rows are the work left.',
    ].join('\n'),
  };
}
