// `attend send` wall time against `node -e 0` (issue #2: within 1.5×, medians, same run).
// The runs interleave so drift in machine load hits both sides alike.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function procStart(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

function time(args, env, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), p90: q(0.9), min: s[0] };
};

export default async function ({ bin, tmp, quick }) {
  const rounds = quick ? 8 : 40;
  const home = join(tmp, 'home');
  const claude = join(tmp, 'claude');
  const work = join(tmp, 'work', 'api');
  mkdirSync(join(claude, 'sessions'), { recursive: true });
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ATTEND_HOME: join(tmp, 'bus'), CLAUDE_CONFIG_DIR: claude, USER: 'bench' };
  // One live stand-in session, so `--to` has someone to resolve and an agent can send.
  const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const sid = '00000000-0000-4000-8000-0000000be7c4';
  writeFileSync(join(claude, 'sessions', `${sleeper.pid}.json`), JSON.stringify({ pid: sleeper.pid, sessionId: sid, cwd: work, procStart: procStart(sleeper.pid), name: 'api', status: 'idle' }));
  const agentEnv = { ...env, CLAUDECODE: '1', CLAUDE_PID: String(sleeper.pid), CLAUDE_CODE_SESSION_ID: sid };
  const cases = [
    ['node -e 0', ['-e', '0'], env],
    ['attend send (human, #open)', [bin, 'send', 'build is green'], env],
    ['attend send (agent, #open)', [bin, 'send', 'build is green'], agentEnv],
    ['attend send --to api (human)', [bin, 'send', '--to', 'api', 'schema changed'], env],
    ['attend whoami (full CLI, for scale)', [bin, 'whoami'], agentEnv],
  ];
  const times = new Map(cases.map(([name]) => [name, []]));
  try {
    for (const [, args, e] of cases) time(args, e, work); // warm the page cache
    for (let r = 0; r < rounds; r++) for (const [name, args, e] of cases) times.get(name).push(time(args, e, work));
  } finally {
    sleeper.kill('SIGKILL');
  }
  const base = stats(times.get('node -e 0')).median;
  const rows = cases.map(([name]) => {
    const s = stats(times.get(name));
    return `| ${name} | ${s.median.toFixed(1)} | ${s.p90.toFixed(1)} | ${s.min.toFixed(1)} | ${(s.median / base).toFixed(2)}× |`;
  });
  const ratio = stats(times.get('attend send (human, #open)')).median / base;
  return {
    title: 'attend send startup',
    markdown: [
      `Target (issue #2): \`attend send\` median wall time ≤ 1.5× \`node -e 0\`. Measured: **${ratio.toFixed(2)}×** (${rounds} interleaved rounds).`,
      '',
      '| command | median ms | p90 ms | min ms | vs node -e 0 |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      'Every command runs with the same small environment (PATH, HOME, ATTEND_HOME, CLAUDE_CONFIG_DIR, USER); variables such as NODE_EXTRA_CA_CERTS slow every node start alike and are left out.',
      '',
      'How send stays close to node: the executable is CommonJS (`dist/tools/cli/attend.cjs`, ~4 ms less start-up than an ESM entry); `send` and `reply` take a fast path that skips commander (`tools/cli/fast-send.ts`), which postbuild bundles into one CJS file (`fast-send.cjs`) so node loads one module instead of ~20; and the standard streams are not created unless used (each costs ~3 ms), output goes straight to the file descriptor.',
    ].join('\n'),
  };
}
