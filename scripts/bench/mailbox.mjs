// Sending to a party that is not live against sending to a live one (issue 21, Performance:
// "sending to an offline party costs the same as to a live one, within 1.1×"). One bus with
// one live session (`api`) and a known-parties file of 1,000 parties that ended (as a bus
// keeps them: state/names.json), `old` among them; `attend send --to api` and `--to old`
// interleaved, medians of the same run. A name that no live party has is looked up in the
// known parties (tools/bus/presence/known.ts): this is what that costs a send.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function procStart(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

function time(args, env, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stderr: r.stderr };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export default async function ({ bin, tmp, quick }) {
  const rounds = quick ? 8 : 40;
  const known = 1000;
  const home = join(tmp, 'home');
  const claude = join(tmp, 'claude');
  const root = join(tmp, 'bus');
  const work = join(tmp, 'work');
  mkdirSync(join(claude, 'sessions'), { recursive: true });
  mkdirSync(home, { recursive: true });
  mkdirSync(join(work, 'api'), { recursive: true });
  mkdirSync(join(root, 'state'), { recursive: true, mode: 0o700 });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ATTEND_HOME: root, CLAUDE_CONFIG_DIR: claude, USER: 'bench' };
  const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const sid = '00000000-0000-4000-8000-0000000be7c4';
  writeFileSync(join(claude, 'sessions', `${sleeper.pid}.json`), JSON.stringify({ pid: sleeper.pid, sessionId: sid, cwd: join(work, 'api'), procStart: procStart(sleeper.pid), name: 'api', status: 'idle' }));
  // The parties a long-lived bus has known: sessions that ended, each with its last name and origin.
  const now = Date.now();
  const names = {};
  for (let i = 0; i < known; i++) {
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    names[id] = { name: i === known - 1 ? 'old' : `gone-${i}`, at: now - i * 60_000, kind: 'agent', origin: join(work, `p${i % 50}`), seen: now - i * 60_000 };
  }
  writeFileSync(join(root, 'state', 'names.json'), `${JSON.stringify({ v: 1, names })}\n`, { mode: 0o600 });
  const cases = [
    ['attend send --to api (live)', [bin, 'send', '--to', 'api', 'schema changed']],
    ['attend send --to old (ended; one of 1,000 known)', [bin, 'send', '--to', 'old', 'schema changed']],
  ];
  const times = new Map(cases.map(([name]) => [name, []]));
  let note = '';
  try {
    for (const [, args] of cases) time(args, env, home); // warm the page cache
    note = time(cases[1][1], env, home).stderr.trim();
    for (let r = 0; r < rounds; r++) for (const [name, args] of cases) times.get(name).push(time(args, env, home).ms);
  } finally {
    sleeper.kill('SIGKILL');
  }
  const live = median(times.get(cases[0][0]));
  const gone = median(times.get(cases[1][0]));
  return {
    title: 'Sending to a party that is not live',
    markdown: [
      `Target (issue 21, Performance): a send to a party with no conduit live costs what one to a live party does, within 1.1×. Measured: **${(gone / live).toFixed(2)}×** (medians of ${rounds} interleaved rounds; a bus with one live session and ${known.toLocaleString('en')} parties that ended in its known-parties file). The sender is told \`${note.replace(/\d+[smhd] ago/, 'N ago')}\`.`,
      '',
      '| command | median ms | vs live |',
      '| --- | ---: | ---: |',
      `| ${cases[0][0]} | ${live.toFixed(1)} | 1.00× |`,
      `| ${cases[1][0]} | ${gone.toFixed(1)} | ${(gone / live).toFixed(2)}× |`,
    ].join('\n'),
  };
}
