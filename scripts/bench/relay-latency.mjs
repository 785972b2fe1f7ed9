// Cross-machine send → remote Monitor line (issue 13): two bus roots stand in for two
// machines, each with a real `attend relay`, one real nats-server on loopback. A message is
// written on machine A to a session on machine B, and timed until its header line appears
// on that session's sensor (`attend run`) on B. p50 and p99 over 1,000 messages, one at a time.
// The helpers are exported for relay-burst.mjs.

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, watch } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { busLib, fakeSession, pct, person, startSensor } from './latency.mjs';

export async function startHub(tmp) {
  const store = join(tmp, 'hub-store');
  mkdirSync(store, { recursive: true });
  const launch = (port) =>
    new Promise((resolve, reject) => {
      const proc = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const on = (b) => {
        out += b;
        const m = /Listening for client connections on [^\s]*:(\d+)/.exec(out);
        if (m) resolve({ proc, port: Number(m[1]) });
      };
      proc.stdout.on('data', on);
      proc.stderr.on('data', on);
      proc.once('exit', (c) => reject(new Error(`nats-server exited ${c}: ${out}`)));
    });
  let cur = await launch(-1);
  const port = cur.port;
  return {
    url: `nats://127.0.0.1:${port}`,
    get pid() {
      return cur.proc.pid;
    },
    async kill() {
      cur.proc.kill('SIGKILL');
      await new Promise((r) => (cur.proc.exitCode !== null || cur.proc.signalCode !== null ? r() : cur.proc.once('exit', r)));
    },
    async restart() {
      for (let i = 0; ; i++) {
        try {
          cur = await launch(port);
          return;
        } catch (err) {
          if (i > 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    stop() {
      cur.proc.kill('SIGTERM');
    },
  };
}

/** A machine: its own bus root and HOME; `session` makes a fake Claude Code session on it. */
export function machineEnv(tmp, host) {
  const dir = join(tmp, host);
  mkdirSync(join(dir, 'claude', 'sessions'), { recursive: true });
  return { host, dir, root: join(dir, 'bus'), env: { PATH: process.env.PATH, HOME: dir, ATTEND_HOME: join(dir, 'bus'), CLAUDE_CONFIG_DIR: join(dir, 'claude'), USER: `${host}-user` } };
}

export async function waitUntil(fn, timeoutMs = 30_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** A hub of its own under `dir`, machines alpha and bravo, and `bin`'s writer with an id factory. */
export async function twoMachines(bin, dir) {
  mkdirSync(dir, { recursive: true });
  const hub = await startHub(dir);
  const { writeSignal, createIdFactory } = await busLib(bin);
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  return { hub, a: machineEnv(dir, 'alpha'), b: machineEnv(dir, 'bravo'), writeSignal, newId };
}

/** `presenceTtl`: seconds (5 unless given; null for the relay's default). */
export async function startRelay(bin, m, url, { presenceTtl = 5 } = {}) {
  const started = Date.now();
  const ttl = presenceTtl === null ? [] : ['--presence-ttl', String(presenceTtl)];
  const proc = spawn(process.execPath, [bin, 'relay', '--server', url, '--host', m.host, ...ttl], { env: m.env, stdio: ['ignore', 'ignore', 'ignore'] });
  await waitUntil(() => {
    const s = readJson(join(m.root, 'relay', 'status.json'));
    return s && s.pid === proc.pid && s.ready && s.updatedAt >= started;
  }, 20_000, `relay ${m.host}`);
  return proc;
}

export function countSignals(dir) {
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.signal')).length;
  } catch {
    return 0;
  }
}

/** CPU ms (user+system) and RSS MiB of a process, from /proc. */
export function procUsage(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  return { cpuMs: ticks * 10, rssMiB: rss };
}

/** SIGTERM and wait for each to exit, so nothing writes while the runner removes tmp. */
export async function stopAll(procs) {
  await Promise.all(
    procs.map((p) => (p.exitCode !== null || p.signalCode !== null ? null : new Promise((r) => (p.once('exit', r), p.kill('SIGTERM'))))),
  );
}

export { pct };

export async function names(bin) {
  const tools = dirname(dirname(bin));
  return import(pathToFileURL(join(tools, 'wire/names.js')).href);
}

/**
 * `n` sends one at a time, A → a session on B, each timed until its line on B's sensor.
 * `dirs`: that many other trays on A's bus first, a message in each (other projects'), which
 * A's relay follows too.
 */
async function measure(bin, tmp, n, { dirs = 0 } = {}) {
  const hub = await startHub(tmp);
  const a = machineEnv(tmp, 'alpha');
  const bTmp = join(tmp, 'bravo');
  mkdirSync(bTmp, { recursive: true });
  const s = fakeSession(bTmp, 'bee');
  const b = { host: 'bravo', root: s.root, env: { ...s.env } };
  delete b.env.CLAUDECODE;
  delete b.env.CLAUDE_PID;
  delete b.env.CLAUDE_CODE_SESSION_ID;
  const { writeSignal, createIdFactory } = await busLib(bin);
  const { attendKey } = await names(bin);
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  for (let d = 0; d < dirs; d++) {
    const cwd = `/srv/project-${d}`;
    writeSignal(a.root, { kind: 'tray', key: attendKey(cwd) }, newId(), { from: `external:${person}@pts-1`, project: `project-${d}`, cwd, fromKind: 'human', fromId: person, to: `nobody-${d}`, body: 'another project' });
  }
  const procs = [];
  const sensor = startSensor(bin, s);
  procs.push(sensor.proc);
  let watcher = null;
  try {
    procs.push(await startRelay(bin, a, hub.url), await startRelay(bin, b, hub.url));
    await sensor.ready();
    await waitUntil(() => (readJson(join(a.root, 'relay', 'remote.json'))?.hosts?.bravo?.members ?? []).some((m) => m.id === s.sessionId), 20_000, 'bee known at alpha');
    const key = attendKey(s.cwd);
    // When each message's file is in B's tray (an inotify watch): the leg the sensor adds after it.
    const tray = join(b.root, 'signals', key);
    mkdirSync(tray, { recursive: true });
    const landed = new Map();
    watcher = watch(tray, (_e, name) => {
      const id = typeof name === 'string' && name.endsWith('.signal') ? name.slice(0, -'.signal'.length) : null;
      if (id && !landed.has(id)) landed.set(id, performance.now());
    });
    const samples = [];
    const toSensor = [];
    const send = async (i) => {
      const id = newId();
      const from = sensor.state.out.length;
      const t0 = performance.now();
      // As A's person (attend names the person from the passwd entry, not $USER): any other
      // human is a stranger on B, whose lines are held, never shown (issue 20 §3).
      writeSignal(a.root, { kind: 'tray', key }, id, { from: `external:${person}@pts-1`, project: 'b', cwd: '/b', fromKind: 'human', fromId: person, to: s.sessionId, body: `cross-machine ${i}` });
      const t1 = await sensor.waitFor(`id=${id}]`, from, 20_000);
      const tl = landed.get(id);
      landed.delete(id);
      if (tl !== undefined) toSensor.push(Math.max(0, t1 - tl));
      return t1 - t0;
    };
    for (let i = 0; i < 20; i++) await send(-i); // warm the path (connections, watchers)
    toSensor.length = 0;
    // CPU each process spent on the timed messages (from /proc): steadier than wall times on a
    // shared machine, and what the path costs whatever the load.
    const who = [procs[1], procs[2], sensor.proc, { pid: hub.pid }];
    const cpu0 = who.map((p) => procUsage(p.pid).cpuMs);
    for (let i = 0; i < n; i++) samples.push(await send(i));
    const cpu = who.map((p, i) => (procUsage(p.pid).cpuMs - cpu0[i]) / n);
    samples.sort((x, y) => x - y);
    toSensor.sort((x, y) => x - y);
    return { samples, toSensor, cpu };
  } finally {
    watcher?.close();
    await stopAll(procs);
    s.proc.kill('SIGKILL');
    hub.stop();
  }
}

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 200 : 1000;
  // With ATTEND_BENCH_BASELINE (another build's dist/tools/cli/attend.cjs, e.g. main's): the same
  // for that build first, on a hub of its own, in this run.
  const baselineBin = process.env.ATTEND_BENCH_BASELINE;
  const base = baselineBin ? await measure(baselineBin, join(tmp, 'baseline'), n) : null;
  const cur = await measure(bin, join(tmp, 'current'), n);
  const row = (what, r) => `| ${what} | ${pct(r.samples, 50).toFixed(1)} ms | ${pct(r.samples, 99).toFixed(1)} ms | ${r.samples[r.samples.length - 1].toFixed(1)} ms | ${pct(r.toSensor, 50).toFixed(1)} / ${pct(r.toSensor, 99).toFixed(1)} ms | ${r.cpu.map((c) => c.toFixed(2)).join(' / ')} ms | p50 ≤ 3 ms, p99 ≤ 10 ms |`;
  // Growth: the same path with other projects' trays on A's bus, each build in turn per size.
  const sizes = quick ? [0, 100] : [0, 100, 1000];
  const perSize = quick ? 100 : 300;
  const growth = [];
  for (const dirs of sizes) {
    const b = baselineBin ? await measure(baselineBin, join(tmp, `baseline-${dirs}`), perSize, { dirs }) : null;
    const c = await measure(bin, join(tmp, `current-${dirs}`), perSize, { dirs });
    growth.push({ dirs, b, c });
  }
  const cell = (r) => `${pct(r.samples, 50).toFixed(1)} / ${pct(r.samples, 99).toFixed(1)} ms, relay A ${r.cpu[0].toFixed(2)} ms`;
  return {
    title: 'Cross-machine send → remote Monitor line latency',
    markdown: [
      `${n} messages written one at a time on machine A to a session on machine B (two bus roots, two \`attend relay\` processes, one \`nats-server\` ${'2.9'} on loopback), timed until each header line appeared on B's sensor. The sensor's own part is from the message's file in B's tray (an inotify watch) to its line; CPU per message is each process's user and system time over the timed messages, from /proc (10 ms ticks).${base ? ' The baseline build (ATTEND_BENCH_BASELINE) was measured first, on a hub of its own.' : ''}`,
      '',
      '| build | p50 | p99 | max | file in B → line (p50 / p99) | CPU per message: relay A / relay B / B\'s sensor / hub | goal |',
      '|---|---|---|---|---|---|---|',
      ...(base ? [row('baseline', base)] : []),
      row(base ? 'this build' : 'attend relay', cur),
      '',
      `The same path with other projects' trays on A's bus (a message in each, which A's relay follows too), ${perSize} messages per size, each build in turn on a hub of its own: p50 / p99 send → line, and relay A's CPU per message. A relay whose per-message work grows with the directories under signals/ shows it here.`,
      '',
      `| other trays on A | ${baselineBin ? 'baseline | ' : ''}this build |`,
      `|---|${baselineBin ? '---|' : ''}---|`,
      ...growth.map((g) => `| ${g.dirs.toLocaleString('en-US')} | ${g.b ? `${cell(g.b)} | ` : ''}${cell(g.c)} |`),
    ].join('\n'),
  };
}
