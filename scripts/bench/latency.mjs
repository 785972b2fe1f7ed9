// Send → Monitor line latency: a message is written through the bus library (as `attend
// send` writes it) and timed until its header line appears on a running sensor's stdout.
// p50 and p99 over 1,000 messages, one at a time.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { Worker } from 'node:worker_threads';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The person of the bus: the user this process runs as (attend names it from the passwd entry,
 * never $USER). Only the person's unsigned lines read as a person's; any other "human" is a
 * stranger, held under the groups default (issue 20 §3), so the benches write as the person.
 */
export const person = userInfo().username;

/** The value at percentile `p` of an ascending list. */
export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Inotify watches a process holds (from /proc). */
export function watches(pid) {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
    try {
      n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    } catch {}
  }
  return n;
}

/** Resident memory of a process, MiB (from /proc). */
export function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The session record Claude Code keeps for a live `pid`, and the env its children inherit. */
function recordSession(tmp, name, pid) {
  const claudeDir = join(tmp, 'claude');
  const cwd = join(tmp, 'work', name);
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  const sessionId = `00000000-0000-4000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}`;
  const record = join(claudeDir, 'sessions', `${pid}.json`);
  writeFileSync(record, JSON.stringify({ pid, sessionId, cwd, procStart, name, status: 'idle', kind: 'interactive' }));
  const env = { PATH: process.env.PATH, HOME: tmp, ATTEND_HOME: join(tmp, 'bus'), CLAUDE_CONFIG_DIR: claudeDir, USER: 'bench', CLAUDECODE: '1', CLAUDE_PID: String(pid), CLAUDE_CODE_SESSION_ID: sessionId };
  return { sessionId, cwd, env, root: env.ATTEND_HOME, record };
}

// The stand-in's thread reports its own task id and then idles (test/helpers/temp-bus.ts STAND_IN).
const STAND_IN = `const { workerData } = require('node:worker_threads');
Atomics.store(workerData, 0, Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()));
Atomics.notify(workerData, 0);
setInterval(() => {}, 1 << 30);`;

/**
 * A live Claude Code session that attend accepts as the caller (identity follows the process
 * ancestry, issue 20 §1): a thread of this bench process, which is the parent of every attend
 * it starts, with the session record naming the thread; as test/helpers/temp-bus.ts liveTask
 * does. A separate sleeper process would be in no command's ancestry, and attend refuses to
 * speak as it (so a sensor started for it never starts). `proc.kill()` ends the thread and
 * removes the record, as Claude Code does on exit.
 */
export function standIn(tmp, name) {
  const tasks = () => new Set(readdirSync('/proc/self/task').map(Number));
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const before = tasks();
  const worker = new Worker(STAND_IN, { eval: true, workerData: cell, stdout: true, stderr: true });
  worker.unref();
  // The thread exists once the constructor returns: the one new task of this process is it.
  // Should another thread have started meanwhile, the thread says which it is.
  const fresh = [...tasks()].filter((t) => !before.has(t));
  let tid = fresh.length === 1 ? fresh[0] : 0;
  if (tid === 0) {
    if (Atomics.wait(cell, 0, 0, 30_000) === 'timed-out') {
      void worker.terminate();
      throw new Error('a stand-in session thread did not start within 30 s');
    }
    tid = Atomics.load(cell, 0);
  }
  const { record, ...s } = recordSession(tmp, name, tid);
  const kill = () => {
    void worker.terminate();
    rmSync(record, { force: true });
  };
  return { proc: { pid: tid, kill }, ...s };
}

/** The benches' session: a stand-in thread (the name predates identity from the ancestry). */
export const fakeSession = standIn;

/**
 * A family policy on the bus at `root`, for a bench about a cost, not about groups: under the
 * groups default a writer with no lineage here (a stand-in lead, a bench signer) may not reach
 * the session at all, and its messages would be held, not shown; as
 * test/drain/held-flood.test.ts has.
 */
export async function familyPolicy(bin, root) {
  const tools = dirname(dirname(bin));
  const { updatePolicy } = await import(pathToFileURL(join(tools, 'bus/trust/policy.js')).href);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  updatePolicy(root, { kind: 'human', id: 'bench' }, (p) => {
    p.mode = 'family';
    p.open = 'everyone';
  });
}

export async function busLib(bin) {
  const tools = dirname(dirname(bin));
  const { writeSignal } = await import(pathToFileURL(join(tools, 'bus/store/messages.js')).href);
  const { createIdFactory } = await import(pathToFileURL(join(tools, 'wire/ids.js')).href);
  return { writeSignal, createIdFactory };
}

export function startSensor(bin, s) {
  const proc = spawn(process.execPath, [bin, 'run'], { cwd: s.cwd, env: s.env, stdio: ['ignore', 'pipe', 'ignore'] });
  const state = { out: '', waiters: [] };
  proc.stdout.setEncoding('utf8').on('data', (d) => {
    state.out += d;
    const now = performance.now();
    state.waiters = state.waiters.filter((w) => (state.out.includes(w.text, w.from) ? (w.resolve(now), false) : true));
  });
  const waitFor = (text, from = 0, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      if (state.out.includes(text, from)) return resolve(performance.now());
      const w = { text, from, resolve };
      state.waiters.push(w);
      setTimeout(() => reject(new Error(`timed out waiting for ${text}`)), timeoutMs).unref();
    });
  // The sensor prints nothing on start (a quiet bus costs the model no turn): it is up once
  // its heartbeat is on the bus.
  const presence = join(s.root, 'state', 'presence', `${encodeURIComponent(s.sessionId)}~sensor.json`);
  const ready = async (timeoutMs = 20_000) => {
    const t0 = performance.now();
    while (!existsSync(presence)) {
      if (performance.now() - t0 > timeoutMs) throw new Error('timed out waiting for the sensor to start');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { proc, state, waitFor, ready };
}


export default async function ({ bin, tmp, quick }) {
  const n = quick ? 200 : 1000;
  const s = fakeSession(tmp, 'latency');
  const { writeSignal, createIdFactory } = await busLib(bin);
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const sensor = startSensor(bin, s);
  try {
    await sensor.ready();
    // Let the watcher finish its start (the event probe) before timing.
    await new Promise((r) => setTimeout(r, 500));
    const samples = [];
    for (let i = 0; i < n; i++) {
      const id = newId();
      const from = sensor.state.out.length;
      const t0 = performance.now();
      writeSignal(s.root, { kind: 'open' }, id, { from: `external:${person}@pts-1`, project: 'b', cwd: '/b', fromKind: 'human', fromId: person, to: '*', body: `latency ${i}` });
      const t1 = await sensor.waitFor(`id=${id}]`, from);
      samples.push(t1 - t0);
    }
    samples.sort((a, b) => a - b);
    const p50 = pct(samples, 50);
    const p99 = pct(samples, 99);
    const max = samples[samples.length - 1];
    return {
      title: 'Send → Monitor line latency',
      markdown: [
        `${n} messages written one at a time to \`#open\` while \`attend run\` watched (native events), timed until each header line appeared on the sensor's stdout.`,
        '',
        '| p50 | p99 | max | goal |',
        '|---|---|---|---|',
        `| ${p50.toFixed(1)} ms | ${p99.toFixed(1)} ms | ${max.toFixed(1)} ms | p99 ≤ 100 ms |`,
      ].join('\n'),
    };
  } finally {
    sensor.proc.kill('SIGTERM');
    s.proc.kill('SIGKILL');
  }
}

/**
 * `n` live sessions on the bus at `root` (issue 24: costs that must not grow with the number
 * of sessions): stand-in session threads of this process, each with its session record, and a
 * sensor's presence record naming it, renewed every 30 s as a running `attend run` beats (the
 * renewals spread over the 30 s, so the bus sees one every 30/n s, as it would). `stop()` ends
 * the beats and the sessions.
 */
export async function liveSessions(bin, tmp, root, n) {
  const tools = dirname(dirname(bin));
  const { writePresence } = await import(pathToFileURL(join(tools, 'bus/presence/heartbeats.js')).href);
  const sessions = [];
  for (let i = 0; i < n; i++) sessions.push(standIn(tmp, `live-${i}`));
  let at = root;
  const beat = (s) => writePresence(at, { id: s.sessionId, kind: 'agent', origin: s.cwd, heartbeat: Date.now(), role: 'sensor', pid: s.proc.pid });
  for (const s of sessions) beat(s);
  let next = 0;
  let stopped = false;
  const timer = setInterval(() => beat(sessions[next++ % n]), Math.max(1, Math.floor(30_000 / n)));
  timer.unref();
  return {
    sessions,
    /** The sessions' beats go to another bus from now on (a bench with one bus per size). */
    moveTo(otherRoot) {
      at = otherRoot;
      if (!stopped) for (const s of sessions) beat(s);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      for (const s of sessions) s.proc.kill();
    },
  };
}
