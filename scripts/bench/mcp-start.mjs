// `attend mcp` start-up (issue #11 §9): the time from spawning the server to its answer to
// `initialize`, against the wall time of `node -e 0` (goal ≤ 1.5×, medians, same run). A
// client waits this long before it can list tools; Claude Code starts every MCP server of
// every session. The runs interleave so drift in machine load hits both sides alike.

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function procStart(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

const INIT = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } })}\n`;

/** Spawn to exit. */
function timeExit(args, env, cwd) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const p = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (c) => (err += c));
    p.on('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`))));
  });
}

const LIST = [
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join('');

/** Spawn to the answer with id `until` (1: initialize; 2: tools/list and 3: a tools/call, written right after); then end the server. */
function timeInitialize(args, env, cwd, until = 1) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const p = spawn(process.execPath, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stderr.on('data', (c) => (err += c));
    p.stdout.setEncoding('utf8').on('data', (c) => {
      out += c;
      const lines = out.split('\n').slice(0, -1).map((l) => JSON.parse(l));
      const msg = lines.find((m) => m.id === until);
      if (!msg) return;
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      p.stdin.end();
      p.kill('SIGKILL');
      const ok = until === 1 ? msg.result?.protocolVersion : until === 2 ? msg.result?.tools?.length > 0 : msg.result?.structuredContent?.id;
      if (!ok) reject(new Error(`not the expected result: ${out.slice(0, 200)}`));
      else p.on('exit', () => resolve(ms));
    });
    p.on('exit', (code) => {
      if (!out.includes('\n')) reject(new Error(`${args.join(' ')} exited ${code} before answering: ${err}`));
    });
    // Written at once, as a client does: the server reads it when it is ready.
    p.stdin.write(until === 1 ? INIT : INIT + LIST);
  });
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), p90: q(0.9), min: s[0] };
};

export default async function ({ bin, tmp, quick }) {
  const rounds = quick ? 8 : 30;
  const home = join(tmp, 'home');
  const claude = join(tmp, 'claude');
  const work = join(tmp, 'work', 'api');
  mkdirSync(join(claude, 'sessions'), { recursive: true });
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ATTEND_HOME: join(tmp, 'bus'), CLAUDE_CONFIG_DIR: claude, USER: 'bench' };
  // A live stand-in session, so the server starts as an agent would see it.
  const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const sid = '00000000-0000-4000-8000-0000000be7c5';
  writeFileSync(join(claude, 'sessions', `${sleeper.pid}.json`), JSON.stringify({ pid: sleeper.pid, sessionId: sid, cwd: work, procStart: procStart(sleeper.pid), name: 'api', status: 'idle' }));
  const agentEnv = { ...env, CLAUDECODE: '1', CLAUDE_PID: String(sleeper.pid), CLAUDE_CODE_SESSION_ID: sid };
  const cases = [
    ['node -e 0 (to exit)', () => timeExit(['-e', '0'], env, work)],
    ['attend mcp (to the initialize result)', () => timeInitialize([bin, 'mcp'], agentEnv, work)],
    ['attend mcp --channel (to the initialize result)', () => timeInitialize([bin, 'mcp', '--channel'], agentEnv, work)],
    ['attend mcp (to the tools/list result)', () => timeInitialize([bin, 'mcp'], agentEnv, work, 2)],
    ['attend mcp (to the first tools/call result, for scale)', () => timeInitialize([bin, 'mcp'], agentEnv, work, 3)],
  ];
  const times = new Map(cases.map(([name]) => [name, []]));
  try {
    for (const [, run] of cases) await run(); // warm the page cache
    for (let r = 0; r < rounds; r++) for (const [name, run] of cases) times.get(name).push(await run());
  } finally {
    sleeper.kill('SIGKILL');
  }
  const base = stats(times.get(cases[0][0])).median;
  const rows = cases.map(([name]) => {
    const s = stats(times.get(name));
    return `| ${name} | ${s.median.toFixed(1)} | ${s.p90.toFixed(1)} | ${s.min.toFixed(1)} | ${(s.median / base).toFixed(2)}× |`;
  });
  const ratio = stats(times.get(cases[1][0])).median / base;
  return {
    title: 'attend mcp startup',
    markdown: [
      `Target (issue #11 §9): the time from spawning \`attend mcp\` to its answer to \`initialize\`, median ≤ 1.5× the wall time of \`node -e 0\`. Measured: **${ratio.toFixed(2)}×** (${rounds} interleaved rounds).`,
      '',
      '| command | median ms | p90 ms | min ms | vs node -e 0 |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      'The client writes `initialize` (protocol 2025-11-25) as soon as the process is spawned, as Claude Code does; the clock stops at its answer. How: `attend mcp [--channel]` skips commander (tools/cli/fast-mcp.ts, bundled by postbuild into fast-mcp.cjs) and answers `initialize` from tools/mcp/stdio.ts and info.ts alone, and `tools/list` from dist/tools/mcp/tools-list.json, which postbuild writes from the tool definitions (the server checks that its own answers are the same). The MCP SDK and zod, which cost several times node\'s own start to load, load right after the `initialize` answer; the first `tools/call` (the last row) waits for them.',
    ].join('\n'),
  };
}
