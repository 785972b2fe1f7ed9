// attend doctor (the first hour, Performance): its wall time as a process, from inside a
// Claude Code session, on a bus with 1, 5 and 20 stand-in sessions, each with its session record,
// its SessionStart presence and a message sent, after `attend install`. Goal from the issue:
// under 0.5 s at 20 sessions. The login-shell probe doctor runs (`$SHELL -lc`, here bash with
// no profile) is timed on its own, and `node -e 0` as the floor.

import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { fakeSession } from './latency.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function timed(cmd, args, opts) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  const ms = performance.now() - t0;
  return { ms, r };
}

function run(bin, s, args, input = '') {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: s.cwd, env: s.env, input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`attend ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

/** A bus with n stand-in sessions, after attend install in the last; returns it and its sessions. */
function setUp(bin, parent, n) {
  const tmp = mkdtempSync(join(parent, `doctor-${n}-`));
  const sessions = [];
  for (let i = 0; i < n; i++) {
    const s = fakeSession(tmp, `s${i}`);
    // doctor runs a login shell: bash, whose PATH here comes from /etc/profile (no ~/.profile).
    s.env = { ...s.env, SHELL: '/bin/bash', ATTEND_NO_DELIVERER: '1' };
    sessions.push(s);
    run(bin, s, ['hook', 'session-start'], JSON.stringify({ session_id: s.sessionId, hook_event_name: 'SessionStart', cwd: s.cwd }));
    run(bin, s, ['send', `hello from s${i}`]);
  }
  run(bin, sessions.at(-1), ['install']);
  return { n, sessions, me: sessions.at(-1), times: [], checks: 0 };
}

function doctorOnce(bin, row) {
  const { ms, r } = timed(process.execPath, [bin, 'doctor', '--json'], { cwd: row.me.cwd, env: row.me.env });
  if (r.stdout.trim() === '') throw new Error(`attend doctor printed nothing: ${r.stderr}`);
  row.checks = JSON.parse(r.stdout).checks.length;
  return ms;
}

export default async function ({ bin, tmp, quick }) {
  const runs = quick ? 3 : 9;
  const rows = [];
  const floorTimes = [];
  const loginTimes = [];
  try {
    for (const n of [1, 5, 20]) rows.push(setUp(bin, tmp, n));
    for (const row of rows) doctorOnce(bin, row); // a warm-up each: the page cache
    // Round robin, so a machine that gets busier during the run weighs on every row alike.
    for (let i = 0; i < runs; i++) {
      for (const row of rows) row.times.push(doctorOnce(bin, row));
      floorTimes.push(timed(process.execPath, ['-e', '0'], {}).ms);
      loginTimes.push(timed('/bin/bash', ['-lc', 'command -v attend; command -v node'], { env: { HOME: tmp, PATH: '/usr/bin:/bin' } }).ms);
    }
  } finally {
    for (const row of rows) for (const s of row.sessions) s.proc.kill('SIGKILL');
  }
  for (const row of rows) row.ms = median(row.times);
  const floor = median(floorTimes);
  const login = median(loginTimes);
  const base = rows[0].ms;
  const at20 = rows.find((r) => r.n === 20).ms;
  const markdown = [
    `\`attend doctor --json\` as a process from inside a stand-in Claude Code session, after \`attend install\`; each session has its record, its SessionStart presence and one message sent. Median of ${runs} runs after one warm-up, the sizes taken in turn.`,
    '',
    '| sessions | doctor (ms) | × 1 session | × node -e 0 | checks |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.n} | ${r.ms.toFixed(1)} | ${(r.ms / base).toFixed(2)} | ${(r.ms / floor).toFixed(2)} | ${r.checks} |`),
    '',
    `- \`node -e 0\`: ${floor.toFixed(1)} ms; the login-shell probe alone (\`bash -lc 'command -v attend; command -v node'\`): ${login.toFixed(1)} ms.`,
    `- Goal: under 500 ms at 20 sessions: ${at20.toFixed(1)} ms in this run, ${at20 < 500 ? 'met' : 'not met'}; that is ${(at20 / floor).toFixed(2)}× node's own start on the same machine${floor > 150 ? ' (a loaded one: node -e 0 takes well under 100 ms when the machine is idle)' : ''}.`,
  ].join('\n');
  return { title: 'attend doctor', markdown };
}
