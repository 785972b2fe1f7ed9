// Scale (issue #12 §8): what each read costs as history grows, as a growth table. Histories
// are written through attend's own writer (writeSignal: the file, its index line), a tenth
// of them replies, on #open. Each verb runs as a process (node start-up included), median
// of a few runs after the first listing, which builds the listing cache (tools/bus/store/listing.ts)
// and is shown on its own; the ratio is against the 1,000-message bus of the same run. Goal
// from the issue: ≤ 1.5× at 100,000. The chat's first frame is timed in a child process per
// run, from mounting the UI to the frame that shows the newest message. The sensor rows:
// inotify watches and RSS at rest after a start.

import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { busLib, fakeSession, rssMiB, watches } from './latency.mjs';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function timeOnce(bin, s, args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: s.cwd, env: s.env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`attend ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return performance.now() - t0;
}

// Mounts the chat as `attend chat` does (tools/chat/mount.ts, in-memory terminal streams) and
// prints the ms from mounting to the first frame that shows `newest`.
const CHAT_FRAME = `
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const [dist, root, home, newest] = process.argv.slice(1);
class Out extends EventEmitter { columns = 100; rows = 30; isTTY = true; onWrite = null; write(s) { this.onWrite?.(s); return true; } }
class In extends EventEmitter { isTTY = true; setEncoding() {} setRawMode() {} ref() {} unref() {} resume() {} pause() {} read() { return null; } }
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { mountChat, createBusSource, createChatActions } = await (await load('chat/load.js')).loadChatUi();
const { createContext } = await load('cli/context.js');
const env = { HOME: home, ATTEND_HOME: root, USER: 'bench', CLAUDE_CONFIG_DIR: join(home, 'claude'), NO_COLOR: '1' };
const stdout = new Out();
let first = 0;
const t0 = performance.now();
stdout.onWrite = (s) => { if (!first && s.includes(newest)) first = performance.now() - t0; };
const inst = mountChat({ me: 'bench', source: createBusSource({ root }), actions: createChatActions({ makeCtx: () => createContext({ env, cwd: home, identity: 'human', stderr: { write: () => true } }), root, now: Date.now }), depth: 0, now: Date.now, mouse: false, setMouse: () => {} }, { stdout, stdin: new In(), stderr: new Out() });
const start = Date.now();
while (!first && Date.now() - start < 30000) await new Promise((r) => setImmediate(r));
inst.unmount();
process.stdout.write(String(first));
process.exit(first ? 0 : 1);
`;

function chatFirstFrame(bin, s, newest, runs) {
  const dist = dirname(dirname(bin));
  const times = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHAT_FRAME, dist, s.root, s.env.HOME, newest], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`chat first frame: ${r.stderr}`);
    times.push(Number(r.stdout));
  }
  return median(times);
}

function dirBytes(dir) {
  let n = 0;
  for (const name of readdirSync(dir)) n += statSync(join(dir, name)).blocks * 512;
  return n;
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

async function makeBus(bin, tmp, n) {
  // Each size its own home and bus root (fakeSession puts the bus at <tmp>/bus).
  const s = fakeSession(join(tmp, `scale-${n}`), `scale-${n}`);
  const { writeSignal, createIdFactory } = await busLib(bin);
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
  return { n, s, last };
}

/** `runs` rounds, each timing `what` once on every bus in turn: drift on a shared machine hits every size alike. */
function rounds(buses, runs, what) {
  const times = buses.map(() => []);
  for (let r = 0; r < runs; r++) buses.forEach((b, i) => times[i].push(what(b)));
  return times.map(median);
}

export default async function ({ bin, tmp, quick }) {
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const runs = quick ? 3 : 9;
  const buses = [];
  try {
    for (const n of sizes) buses.push(await makeBus(bin, tmp, n));
    const rows = buses.map((b) => ({ n: b.n }));
    // The first listing on a bus builds its listing cache (one read of every message).
    buses.forEach((b, i) => (rows[i].build = timeOnce(bin, b.s, ['inbox'])));
    // Before any delivery a session has no ledger: its unread count is a cold-start plan.
    const set = (k, xs) => xs.forEach((x, i) => (rows[i][k] = x));
    set('cold', rounds(buses, runs, (b) => timeOnce(bin, b.s, ['status', '--json'])));
    for (const b of buses) timeOnce(bin, b.s, ['inbox', '--drain', '--format', 'plain']);
    set('inbox', rounds(buses, runs, (b) => timeOnce(bin, b.s, ['inbox'])));
    set('json', rounds(buses, runs, (b) => timeOnce(bin, b.s, ['inbox', '--json'])));
    set('thread', rounds(buses, runs, (b) => timeOnce(bin, b.s, ['inbox', '--thread', b.last])));
    set('status', rounds(buses, runs, (b) => timeOnce(bin, b.s, ['status', '--json'])));
    set('chat', rounds(buses, runs, (b) => chatFirstFrame(bin, b.s, `history ${b.n - 1}`, 1)));
    for (const [i, b] of buses.entries()) {
      rows[i].bytes = dirBytes(join(b.s.root, 'signals', '_broadcast')) / b.n;
      rows[i].cacheBytes = dirBytes(join(b.s.root, 'cache', 'listing', '_broadcast')) / b.n;
      Object.assign(rows[i], await sensorAtRest(bin, b.s));
    }
    return report(rows, runs);
  } finally {
    for (const b of buses) b.s.proc.kill('SIGKILL');
  }
}

function report(rows, runs) {
  const base = rows[0];
  const cell = (r, k, unit = 'ms') => `${r[k].toFixed(0)} ${unit}${r === base ? '' : ` (${(r[k] / base[k]).toFixed(2)}×)`}`;
  return {
    title: 'Scale: cost against history',
    markdown: [
      `Each verb as a process on a bus with N messages on #open (median of ${runs} rounds, each round timing every bus in turn); in brackets the ratio to 1,000 messages. Goal: ≤ 1.5× at 100,000. The chat's first frame is the time from mounting the UI to the frame that shows the newest message (in-memory terminal, as in the chat benchmark).`,
      '',
      `| messages | inbox | inbox --json | inbox --thread | status | chat first frame | first inbox (builds the cache) | status, no ledger yet | sensor start | sensor inotify watches | sensor RSS at rest | disk per message |`,
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.n.toLocaleString('en')} | ${cell(r, 'inbox')} | ${cell(r, 'json')} | ${cell(r, 'thread')} | ${cell(r, 'status')} | ${cell(r, 'chat')} | ${cell(r, 'build')} | ${cell(r, 'cold')} | ${cell(r, 'startMs')} | ${r.watches} | ${r.rss.toFixed(0)} MiB${r === base ? '' : ` (${(r.rss / base.rss).toFixed(2)}×)`} | ${r.bytes.toFixed(0)} B + ${r.cacheBytes.toFixed(0)} B of listing cache |`),
      '',
      'The listings read only what they show (issue #12 §2): each scope keeps a listing cache under `cache/listing/` (docs/architecture.md), brought up to date from the directory\'s `.index`, so a page, a thread or a count reads a few blocks of it and the messages shown. The first listing on a bus builds the cache by reading every message once (that column; afterwards only what arrives is read, and a full listing of the directory happens when the index cannot explain a change, and at most every 10 minutes). `status` is timed for a session with a delivery ledger (one drain ran first, as the Stop hook or the sensor does in a session with attend installed); before its first delivery a session has no ledger and its unread count is a cold-start plan, which takes the recent ids of #open and channels from those same listings instead of walking every name in the directory (the last listing column). The chat reads the newest 500 messages for its first frame and the rest of its in-memory history after it. The sensor watches directories (one inotify watch each), so its watches and memory do not follow the history.',
    ].join('\n'),
  };
}
