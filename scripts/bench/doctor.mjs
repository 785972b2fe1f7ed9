// attend doctor (the first hour, Performance): its wall time as a process, from inside a
// Claude Code session, on a bus with 1, 5 and 20 live stand-in sessions (standIn: a thread of
// this process, so attend accepts the caller), each with its session record, its SessionStart
// presence and a message sent, after `attend install`. Goals from the issue: under 0.5 s at 20
// sessions, and within 2× `node -e 0`. The fast path (`attend doctor --json`) and the full CLI
// (`attend --no-color doctor --json`, commander) are both timed; the login-shell probe doctor
// runs (`$SHELL -lc`, here bash with no profile) on its own, and `node -e 0` as the floor.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { standIn } from './latency.mjs';

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
    const s = standIn(tmp, `s${i}`);
    // doctor runs a login shell: bash, whose PATH here comes from /etc/profile (no ~/.profile).
    s.env = { ...s.env, SHELL: '/bin/bash', ATTEND_NO_DELIVERER: '1' };
    sessions.push(s);
    run(bin, s, ['hook', 'session-start'], JSON.stringify({ session_id: s.sessionId, hook_event_name: 'SessionStart', cwd: s.cwd }));
    run(bin, s, ['send', `hello from s${i}`]);
  }
  run(bin, sessions.at(-1), ['install']);
  // The figure is only worth its sessions: every one live in the roster, and doctor speaking
  // as the last of them (its session check ok), not as a person beside a bus of sleepers.
  const me = sessions.at(-1);
  const live = JSON.parse(run(bin, me, ['peers', '--json']).stdout).peers.filter((p) => sessions.some((s) => s.sessionId === p.id));
  if (live.length !== n) throw new Error(`attend peers lists ${live.length} of the ${n} stand-in sessions as live`);
  const session = JSON.parse(spawnSync(process.execPath, [bin, 'doctor', '--json'], { cwd: me.cwd, env: me.env, encoding: 'utf8' }).stdout).checks.find((c) => c.name === 'session');
  if (session?.status !== 'ok' || !session.detail.startsWith(me.sessionId)) throw new Error(`attend doctor does not speak as the stand-in session: ${JSON.stringify(session)}`);
  return { n, sessions, me, times: [], full: [], cold: [], checks: 0 };
}

/** One `attend doctor --json`; `full` puts --no-color first, which the fast path declines. */
function doctorOnce(bin, row, full = false) {
  const { ms, r } = timed(process.execPath, [bin, ...(full ? ['--no-color'] : []), 'doctor', '--json'], { cwd: row.me.cwd, env: row.me.env });
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
      for (const row of rows) {
        row.times.push(doctorOnce(bin, row));
        row.full.push(doctorOnce(bin, row, true));
        // Cold: without what the last doctor kept of the key records (trust/.checked), so every
        // node's record is read and verified, as on the first doctor after a key appeared.
        rmSync(join(row.me.env.HOME, '.config', 'attend', 'trust', '.checked'), { force: true });
        row.cold.push(doctorOnce(bin, row));
      }
      // The floor in the same environment doctor gets: an inherited NODE_EXTRA_CA_CERTS, say,
      // costs node's own start well over 100 ms, and would flatter every ratio.
      floorTimes.push(timed(process.execPath, ['-e', '0'], { cwd: rows[0].me.cwd, env: rows[0].me.env }).ms);
      loginTimes.push(timed('/bin/bash', ['-lc', 'command -v attend; command -v node'], { env: { HOME: tmp, PATH: '/usr/bin:/bin' } }).ms);
    }
  } finally {
    for (const row of rows) for (const s of row.sessions) s.proc.kill('SIGKILL');
  }
  for (const row of rows) {
    row.ms = median(row.times);
    row.fullMs = median(row.full);
    row.coldMs = median(row.cold);
  }
  const floor = median(floorTimes);
  const login = median(loginTimes);
  const base = rows[0].ms;
  const at20 = rows.find((r) => r.n === 20).ms;
  const markdown = [
    `\`attend doctor --json\` as a process from inside a live stand-in Claude Code session (a thread of the bench process, which starts attend), after \`attend install\`; each session is live, with its record, its SessionStart presence and one message sent. The fast path (\`attend doctor --json\`, bundled, no commander) and the full CLI (\`attend --no-color doctor --json\`) alternate. Median of ${runs} runs after one warm-up, the sizes taken in turn. Doctor keeps what it found in each key record under the record's stat (trust/.checked, docs/trust.md); the \"not kept\" column deletes that file before each of its runs, so every node's record is read and verified.`,
    '',
    '| sessions | doctor, fast path (ms) | × 1 session | × node -e 0 | full CLI (ms) | × node -e 0 | fast path, key records not kept (ms) | × node -e 0 | checks |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.n} | ${r.ms.toFixed(1)} | ${(r.ms / base).toFixed(2)} | ${(r.ms / floor).toFixed(2)} | ${r.fullMs.toFixed(1)} | ${(r.fullMs / floor).toFixed(2)} | ${r.coldMs.toFixed(1)} | ${(r.coldMs / floor).toFixed(2)} | ${r.checks} |`),
    '',
    `- \`node -e 0\`: ${floor.toFixed(1)} ms; the login-shell probe alone (\`bash -lc 'command -v attend; command -v node'\`): ${login.toFixed(1)} ms.`,
    `- Goals: under 500 ms at 20 sessions: ${at20.toFixed(1)} ms in this run, ${at20 < 500 ? 'met' : 'not met'}; within 2× \`node -e 0\`: ${(at20 / floor).toFixed(2)}× at 20 sessions, ${(base / floor).toFixed(2)}× at 1, ${at20 / floor <= 2 ? 'met' : 'not met'}${floor > 150 ? ' (a loaded machine: node -e 0 takes well under 100 ms when it is idle)' : ''}.`,
  ].join('\n');
  return { title: 'attend doctor', markdown };
}
