// Ask and wait (issue 23 §1): a waiting `attend ask` returns the reply ≤ 50 ms p99 after the
// reply is written, and costs < 0.5 % of a core while nothing arrives. The person asks a declared
// agent with the built CLI; the reply is written through the bus library (as `attend reply`
// writes it) once the asker has said who its question reaches (its watches are armed right
// after), and timed until the reply's body appears on the asker's stdout. Then one asker
// waits with nothing arriving, and its CPU is read from /proc.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { cpus, loadavg } from 'node:os';
import { pct } from './latency.mjs';

function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (CLK_TCK 100)
}

/** `attend ask`, its output collected; `when(re)` resolves at the first chunk that matches. */
function startAsk(bin, s, args) {
  const proc = spawn(process.execPath, [bin, 'ask', ...args], { cwd: s.cwd, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const st = { out: '', err: '', waiters: [] };
  const feed = (key) => (d) => {
    st[key] += d;
    const now = performance.now();
    st.waiters = st.waiters.filter((w) => (w.re.test(st[w.key]) ? (w.resolve(now), false) : true));
  };
  proc.stdout.setEncoding('utf8').on('data', feed('out'));
  proc.stderr.setEncoding('utf8').on('data', feed('err'));
  const when = (key, re, timeoutMs = 20_000) =>
    new Promise((resolve, reject) => {
      if (re.test(st[key])) return resolve(performance.now());
      st.waiters.push({ key, re, resolve });
      setTimeout(() => reject(new Error(`timed out waiting for ${re} (stderr: ${st.err})`)), timeoutMs).unref();
    });
  const exited = new Promise((r) => proc.on('exit', r));
  return { proc, when, exited };
}

/** The newest message id in any directory of the bus (the question just asked). */
function newestId(root) {
  let best = '';
  for (const d of readdirSync(join(root, 'signals'))) for (const f of readdirSync(join(root, 'signals', d))) if (f.endsWith('.signal') && f > best) best = f;
  return best.slice(0, -'.signal'.length);
}

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 30 : 200;
  const idleSeconds = quick ? 5 : 10;
  // The person asks a declared agent (an identity without a process: the bench needs no
  // process ancestry); the agent's answers come in #open, addressed to the person.
  const root = join(tmp, 'bus');
  const cwd = join(tmp, 'work');
  mkdirSync(cwd, { recursive: true });
  const person = { cwd, env: { PATH: process.env.PATH, HOME: tmp, ATTEND_HOME: root, USER: 'bench' } };
  const agent = { cwd, env: { ...person.env, ATTEND_AGENT: 'codex', ATTEND_AGENT_ID: 'c1' } };
  const whoami = (p) => JSON.parse(spawnSync(process.execPath, [bin, 'whoami', '--json'], { ...p, encoding: 'utf8' }).stdout);
  const me = whoami(person);
  const them = whoami(agent);
  // Known to the bus (as a party that once sent), but it has never signed: the replies the
  // bench writes unsigned are read as its own (a signing party's unsigned line is held).
  const { rememberParties } = await import(pathToFileURL(join(dirname(dirname(bin)), 'bus/presence/names.js')).href);
  rememberParties(root, [{ id: them.id, kind: 'agent', name: 'c1', origin: cwd }], Date.now());
  // The reply is written from a worker thread: a durable write fsyncs, and on this thread it
  // would hold up the reading of the asker's stdout it is timed against.
  const writer = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const clock = () => performance.timeOrigin + performance.now();
     Promise.all([import(workerData.messages), import(workerData.ids)]).then(([{ writeSignal }, { createIdFactory }]) => {
       const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
       parentPort.on('message', ({ root, env }) => {
         const start = clock();
         writeSignal(root, { kind: 'open' }, newId(), env);
         parentPort.postMessage({ start, end: clock() });
       });
       parentPort.postMessage('ready');
     });`,
    { eval: true, workerData: { messages: pathToFileURL(join(dirname(dirname(bin)), 'bus/store/messages.js')).href, ids: pathToFileURL(join(dirname(dirname(bin)), 'wire/ids.js')).href } },
  );
  await new Promise((r) => writer.once('message', r));
  const clock = () => performance.timeOrigin + performance.now();
  const samples = [];
  const fromStart = [];
  for (let i = 0; i < n; i++) {
    const ask = startAsk(bin, person, [them.id, `question ${i}`, '--timeout', '60s']);
    // The send's note is written just before the watches are armed; give it a moment.
    await ask.when('err', /attend: /);
    await new Promise((r) => setTimeout(r, 50));
    const q = newestId(root);
    const printed = ask.when('out', new RegExp(`  answer ${i}\\n`)).then(clock);
    const written = new Promise((r) => writer.once('message', r));
    writer.postMessage({ root, env: { from: them.from, project: 'work', cwd, fromKind: 'agent', fromId: them.id, to: me.id, re: q, body: `answer ${i}` } });
    const [w, t1] = await Promise.all([written, printed]);
    samples.push(t1 - w.end);
    fromStart.push(t1 - w.start);
    await ask.exited;
  }
  samples.sort((a, b) => a - b);
  fromStart.sort((a, b) => a - b);
  await writer.terminate();

  const idle = startAsk(bin, person, [them.id, 'anyone?', '--timeout', `${idleSeconds + 30}s`]);
  await idle.when('err', /attend: /);
  await new Promise((r) => setTimeout(r, 1000));
  const w0 = performance.now();
  const c0 = cpuTicks(idle.proc.pid);
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const c1 = cpuTicks(idle.proc.pid);
  const cpu = ((c1 - c0) / 100 / ((performance.now() - w0) / 1000)) * 100;
  idle.proc.kill('SIGTERM');
  await idle.exited;

  // The same wait as an MCP task (tools/mcp/tasks.ts): `attend mcp` holds a task-augmented
  // `ask` and a pending tasks/result for it, nothing arriving.
  const mcp = spawn(process.execPath, [bin, 'mcp'], { cwd, env: person.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let mcpOut = '';
  mcp.stdout.setEncoding('utf8').on('data', (d) => (mcpOut += d));
  const rpc = (m) => mcp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  const line = (re) =>
    new Promise((resolve, reject) => {
      const t = setInterval(() => {
        const m = mcpOut.split('\n').find((l) => re.test(l));
        if (m) (clearInterval(t), clearTimeout(d), resolve(JSON.parse(m)));
      }, 20);
      const d = setTimeout(() => (clearInterval(t), reject(new Error(`timed out waiting for ${re} from attend mcp`))), 20_000);
    });
  rpc({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } });
  await line(/"id":1,/);
  rpc({ method: 'notifications/initialized' });
  rpc({ id: 2, method: 'tools/call', params: { name: 'ask', arguments: { message: 'anyone, over MCP?', to: [them.id], timeout_seconds: idleSeconds + 30 }, task: { ttl: 60_000 } } });
  const created = await line(/"id":2[,}]/);
  const taskId = created.result?.task?.taskId;
  if (!taskId) throw new Error(`attend mcp did not answer with a task: ${JSON.stringify(created)}`);
  rpc({ id: 3, method: 'tasks/result', params: { taskId } });
  await new Promise((r) => setTimeout(r, 1000));
  const m0 = performance.now();
  const t0 = cpuTicks(mcp.pid);
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const t1 = cpuTicks(mcp.pid);
  const mcpCpu = ((t1 - t0) / 100 / ((performance.now() - m0) / 1000)) * 100;
  const mcpExited = new Promise((r) => mcp.on('exit', r));
  mcp.stdin.end();
  await mcpExited;
  return {
    title: 'Ask and wait (attend ask)',
    markdown: [
      `${n} rounds: the person runs \`attend ask <agent> …\` (a declared agent); once it has sent and armed its watches, the agent's reply (\`re\` the question) is written to \`#open\` through the bus library, as \`attend reply\` writes it, and timed until its body is on the asker's stdout. Then one asker waits ${idleSeconds} s with nothing arriving (after a 1 s settle); its CPU from /proc/<pid>/stat. Then the same wait as an MCP task: \`attend mcp\` holds a task-augmented \`ask\` (MCP 2025-11-25 Tasks) and a pending \`tasks/result\` for it, ${idleSeconds} s with nothing arriving; its CPU likewise.`,
      '',
      `Timed from the end of the reply's write (its directory fsync'ed), and in brackets from its start; the writer is a worker thread of the bench. Load average at the end: ${loadavg()[0].toFixed(1)} on ${cpus().length} cores.`,
      '',
      '| reply written → ask prints it, p50 | p99 | max | waiting, CPU (share of one core) | MCP task waiting, CPU | goal |',
      '|---|---|---|---|---|---|',
      `| ${pct(samples, 50).toFixed(1)} ms (${pct(fromStart, 50).toFixed(1)}) | ${pct(samples, 99).toFixed(1)} ms (${pct(fromStart, 99).toFixed(1)}) | ${samples.at(-1).toFixed(1)} ms | ${cpu.toFixed(2)} % | ${mcpCpu.toFixed(2)} % | p99 ≤ 50 ms; CPU < 0.5 % |`,
    ].join('\n'),
  };
}
