// Adapters (issue 24 §3): an adapter forwards a message to a local outlet ≤ 200 ms p99 after
// it is written. The person runs `attend adapter run` with one webhook outlet, a scripted HTTP
// server of this bench on 127.0.0.1; a declared agent sends the person direct messages with
// the built CLI, one at a time, and each is timed from the time in its id (taken just before
// its file is written, so the figure includes the write) to its arrival at the outlet. Then the
// adapter runs 10 s with nothing arriving, and its CPU is read from /proc. With 100 live
// sessions on the bus (liveSessions in latency.mjs), and a second run in which those sessions
// also post to #open at 20/s throughout (traffic that is not for the person, which every
// cycle's grace window holds).

import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { busLib, liveSessions, pct } from './latency.mjs';

function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 20 : 100;
  const idleSeconds = quick ? 5 : 10;
  const { idTime } = await import(pathToFileURL(join(dirname(dirname(bin)), 'wire/ids.js')).href);
  const root = join(tmp, 'bus');
  const cwd = join(tmp, 'work');
  mkdirSync(cwd, { recursive: true });
  const person = { cwd, env: { PATH: process.env.PATH, HOME: tmp, ATTEND_HOME: root, USER: 'bench', CLAUDE_CONFIG_DIR: join(tmp, 'claude') } };
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const SESSIONS = 100;
  const live = await liveSessions(bin, tmp, root, SESSIONS);
  const { writeSignal, createIdFactory } = await busLib(bin);
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const agent = { cwd, env: { ...person.env, ATTEND_AGENT: 'codex', ATTEND_AGENT_ID: 'c1' } };
  const run = (p, args) => {
    const r = spawnSync(process.execPath, [bin, ...args], { ...p, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`attend ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const me = JSON.parse(run(person, ['whoami', '--json']));
  const arrivals = new Map();
  const waiters = new Map();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const at = Date.now();
      const id = JSON.parse(body).message.id;
      arrivals.set(id, at);
      waiters.get(id)?.(at);
      res.end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  run(person, ['adapter', 'add', 'webhook', 'bench', '--url', `http://127.0.0.1:${server.address().port}/hook`]);
  const adapter = spawn(process.execPath, [bin, 'adapter', 'run'], { ...person, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve) => adapter.stdout.on('data', (d) => String(d).includes('listening') && resolve()));
  const forward = async (label) => {
    const samples = [];
    for (let i = 0; i < n; i++) {
      const { id } = JSON.parse(run(agent, ['send', '--to', me.id, `bench message ${label} ${i}`, '--json']));
      const at = arrivals.get(id) ?? (await new Promise((resolve, reject) => {
        waiters.set(id, resolve);
        setTimeout(() => reject(new Error(`message ${id} never reached the outlet`)), 20_000).unref();
      }));
      samples.push(at - idTime(id));
    }
    return samples.sort((a, b) => a - b);
  };
  const samples = await forward('quiet');
  // The sessions talk in #open at 20/s (not for the person), from 30 s before the run on: the
  // grace window full of messages every cycle passes by.
  let k = 0;
  const chatter = setInterval(() => {
    const sid = live.sessions[k++ % SESSIONS].sessionId;
    writeSignal(root, { kind: 'open' }, newId(), { from: `claude:${sid}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: sid, to: '*', body: `chatter ${k}` });
  }, 50);
  await new Promise((r) => setTimeout(r, quick ? 5_000 : 30_000));
  const busy = await forward('busy');
  clearInterval(chatter);
  await new Promise((r) => setTimeout(r, 1000));
  const c0 = cpuTicks(adapter.pid);
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const cpu = ((cpuTicks(adapter.pid) - c0) / 100 / ((performance.now() - w0) / 1000)) * 100;
  adapter.kill('SIGTERM');
  await new Promise((r) => adapter.on('exit', r));
  server.close();
  live.stop();
  return {
    title: 'Adapters (attend adapter run)',
    markdown: [
      `With ${SESSIONS} live sessions on the bus (session records of live threads, sensor presence renewed every 30 s). ${n} direct messages, one at a time: a declared agent runs \`attend send --to <person>\`; the person's \`attend adapter run\` forwards each to a webhook outlet (a scripted HTTP server of the bench on 127.0.0.1), timed from the millisecond in the message's id (taken just before its file is written) to the request's arrival. Then the adapter runs ${idleSeconds} s with nothing arriving (after a 1 s settle); its CPU from /proc/<pid>/stat. Load average at the end: ${loadavg()[0].toFixed(1)} on ${cpus().length} cores.`,
      '',
      '| #open traffic meanwhile | written → at the outlet, p50 | p99 | max | goal |',
      '|---|---|---|---|---|',
      `| none | ${pct(samples, 50)} ms | ${pct(samples, 99)} ms | ${samples.at(-1)} ms | p99 ≤ 200 ms |`,
      `| the ${SESSIONS} sessions at 20/s (from ${quick ? 5 : 30} s before, so each cycle's 30 s grace window holds ~600 messages) | ${pct(busy, 50)} ms | ${pct(busy, 99)} ms | ${busy.at(-1)} ms | p99 ≤ 200 ms |`,
      '',
      `At rest (nothing arriving, after the traffic stopped), the adapter's CPU: ${cpu.toFixed(2)} % of one core.`,
    ].join('\n'),
  };
}
