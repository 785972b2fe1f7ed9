// The first commands a person types (issue "The first hour"): `attend --help` and
// `attend completion bash` within 2× `node -e 0`; `attend whoami` and `attend doctor`
// measured beside them. Medians of interleaved rounds, so drift in machine load hits every
// command alike; the ratios are within this one run.

import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

function time(args, env, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  // doctor exits 5 when Claude Code is not wired in (as on a bench machine); anything else is a failure.
  if (r.status !== 0 && !(args.includes('doctor') && r.status === 5)) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { median: q(0.5), p90: q(0.9), min: s[0] };
}

export default async function ({ bin, tmp, quick }) {
  const home = join(tmp, 'home');
  const claude = join(home, '.claude');
  mkdirSync(claude, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ATTEND_HOME: join(tmp, 'bus'), CLAUDE_CONFIG_DIR: claude, USER: 'bench' };
  const cases = [
    ['node -e 0', ['-e', '0']],
    ['attend --help', [bin, '--help']],
    ['attend completion bash', [bin, 'completion', 'bash']],
    ['attend whoami', [bin, 'whoami']],
    ['attend doctor', [bin, 'doctor']],
  ];
  // One warm-up each (the page cache, the bus's first directories), not counted.
  for (const [, args] of cases) time(args, env, home);
  const rounds = quick ? 5 : 25;
  const times = new Map(cases.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) for (const [name, args] of cases) times.get(name).push(time(args, env, home));
  const base = stats(times.get('node -e 0')).median;
  const ratio = (name) => stats(times.get(name)).median / base;
  const rows = cases.map(([name]) => {
    const s = stats(times.get(name));
    return `| ${name} | ${s.median.toFixed(1)} | ${s.p90.toFixed(1)} | ${s.min.toFixed(1)} | ${(s.median / base).toFixed(2)}× |`;
  });
  return {
    title: 'First commands (attend --help, completion, whoami, doctor)',
    markdown: [
      `Target: \`attend --help\` and \`attend completion bash\` median wall time ≤ 2× \`node -e 0\`. Measured: **${ratio('attend --help').toFixed(2)}×** and **${ratio('attend completion bash').toFixed(2)}×** (${rounds} interleaved rounds, one run). \`attend whoami\` ${ratio('attend whoami').toFixed(2)}×, \`attend doctor\` ${ratio('attend doctor').toFixed(2)}× (no target; doctor exits 5 here, nothing is installed).`,
      '',
      '| command | median ms | p90 ms | min ms | vs node -e 0 |',
      '| --- | --- | --- | --- | --- |',
      ...rows,
      '',
      'Every command runs with the same small environment (PATH, HOME, ATTEND_HOME, CLAUDE_CONFIG_DIR, USER), stdout to /dev/null.',
    ].join('\n'),
  };
}
