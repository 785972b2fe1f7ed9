// Held messages cost a reader O(1) (issue 20, must-have 5 and attack 9): a session's tray
// holding 20,000 hand-written lines that claim a signing node without a signature (each is
// held: "unsigned, but <node> signs its messages"), against the same tray with none. Timed
// as processes (node start-up included), medians:
//   - steady state, the goal: the tray holds the flood, which earlier listings verified (the
//     held verdicts and runs are kept with the listing cache) and an earlier drain consumed;
//     each run a genuine message arrives and the Stop-hook drain (`attend inbox --drain
//     --format hook`) delivers it; then `attend inbox` lists the tray;
//   - for the record, the first drain to meet a new flood (with one genuine message new as
//     well), which verifies at most 200 of it and must still deliver the genuine one.
// The ratios are measured in one run (goal ≤ 1.5×).

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { busLib, familyPolicy } from './latency.mjs';

/**
 * A stand-in Claude Code session that is this bench process itself, so every `attend` it
 * spawns has the session in its ancestry (issue 20 §1: identity from the process tree; a
 * record for an unrelated process is refused). One config directory per session, so one
 * process can stand in for each in turn.
 */
function selfSession(tmp, name) {
  const claudeDir = join(tmp, `claude-${name}`);
  const cwd = join(tmp, 'work', name);
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  const sessionId = `00000000-0000-4000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}`;
  writeFileSync(join(claudeDir, 'sessions', `${process.pid}.json`), JSON.stringify({ pid: process.pid, sessionId, cwd, procStart, name, status: 'idle', kind: 'interactive' }));
  const env = { PATH: process.env.PATH, HOME: tmp, ATTEND_HOME: join(tmp, 'bus'), CLAUDE_CONFIG_DIR: claudeDir, USER: 'bench', CLAUDECODE: '1', CLAUDE_PID: String(process.pid), CLAUDE_CODE_SESSION_ID: sessionId };
  return { sessionId, cwd, env, root: env.ATTEND_HOME };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timed(bin, s, args, input) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: s.cwd, env: s.env, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`attend ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, out: r.stdout };
}

async function session(bin, tmp, name) {
  const s = selfSession(tmp, name);
  await familyPolicy(bin, s.root);
  const { writeSignal, createIdFactory } = await busLib(bin);
  const tools = dirname(dirname(bin));
  const { attendKey } = await import(pathToFileURL(join(tools, 'wire/names.js')).href);
  const { createSigner } = await import(pathToFileURL(join(tools, 'bus/trust/signing.js')).href);
  const tray = { kind: 'tray', key: attendKey(s.cwd) };
  const dir = join(s.root, 'signals', tray.key);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const signer = createSigner({ keysDir: join(tmp, '.config', 'attend', 'keys'), root: s.root, host: 'bench', now: Date.now });
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  let n = 0;
  return {
    s,
    genuine: () => writeSignal(s.root, tray, newId(), { from: 'claude:sid-lead', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'sid-lead', to: s.sessionId, body: `genuine ${n++}` }, signer),
    flood: (count) => {
      for (let i = 0; i < count; i++) writeFileSync(join(dir, `${newId()}.signal`), `claude:sid-lead|p|/p|from_kind:agent|from_id:sid-lead|to:${s.sessionId}|forged ${i}\n`, { mode: 0o600 });
    },
    drain: () => {
      const r = timed(bin, s, ['inbox', '--drain', '--format', 'hook'], '{"stop_hook_active":false}');
      if (!r.out.includes('additionalContext') || r.out.includes('forged')) throw new Error(`the drain did not deliver the genuine message alone: ${r.out.slice(0, 300)}`);
      return r.ms;
    },
    inbox: () => {
      const { ms, out } = timed(bin, s, ['inbox']);
      if (!out.includes('genuine') || out.includes('forged')) throw new Error(`the inbox did not show the genuine messages alone: ${out.slice(0, 300)}`);
      return ms;
    },
    /** `attend inbox` until it has verified everything (each listing verifies at most 200 unseen files). */
    verify: (limit) => {
      let passes = 0;
      for (;;) {
        const r = spawnSync(process.execPath, [bin, 'inbox'], { cwd: s.cwd, env: s.env, encoding: 'utf8' });
        passes++;
        if (!r.stderr.includes('not verified yet')) return passes;
        if (passes > limit) throw new Error('the inbox never verified the flood');
      }
    },
  };
}

/** Steady state: the flood is there, verified and consumed; each run one genuine message arrives. */
async function steady(bin, tmp, flood, runs) {
  const t = await session(bin, tmp, `held-${flood}`);
  // The session's first drain starts its ledger; the flood arrives; listings verify it; a
  // drain takes it in (consumed as held, by the kept verdicts).
  t.genuine();
  t.drain();
  t.flood(flood);
  const passes = flood > 0 ? t.verify(flood / 100) : 0;
  t.genuine();
  t.drain();
  const drains = [];
  const inboxes = [];
  for (let r = 0; r < runs; r++) {
    t.genuine();
    drains.push(t.drain());
    inboxes.push(t.inbox());
  }
  return { drain: median(drains), inbox: median(inboxes), passes };
}

/** The first drain to meet a new flood (one genuine message new as well): one sample per run. */
async function firstMeet(bin, tmp, flood, runs) {
  const out = [];
  for (let r = 0; r < runs; r++) {
    const t = await session(bin, tmp, `first-${flood}-${r}`);
    t.genuine();
    t.drain();
    t.genuine();
    t.flood(flood);
    out.push(t.drain());
  }
  return median(out);
}

export default async function ({ bin, tmp, quick }) {
  const runs = quick ? 3 : 7;
  const flood = 20_000;
  const none = await steady(bin, tmp, 0, runs);
  const full = await steady(bin, tmp, flood, runs);
  const firstNone = await firstMeet(bin, tmp, 0, quick ? 1 : 3);
  const firstFull = await firstMeet(bin, tmp, flood, quick ? 1 : 3);
  const row = (what, a, b) => `| ${what} | ${a.toFixed(0)} ms | ${b.toFixed(0)} ms | ${(b / a).toFixed(2)}× |`;
  return {
    title: 'Held messages: a flood of 20,000 held lines',
    markdown: [
      `A session's tray with ${flood.toLocaleString('en-US')} hand-written lines that claim a signing node without a signature (all held), against none; as processes (node start-up included), in one run. Steady state (the goal, ≤ 1.5×): the flood is in the tray, listings have verified it (each verifies at most 200 files it has no verdict for; it took ${full.passes} listings, which record it as one held run) and a drain has consumed it; then, ${runs} times, one genuine message arrives, the Stop-hook drain delivers it and \`attend inbox\` lists the tray (medians). The last row, for the record, is the first drain to meet a new flood together with one new genuine message, which it delivers (median of ${quick ? 1 : 3}, a new session each).`,
      '',
      '| reader | no held lines | with the flood | ratio |',
      '|---|---|---|---|',
      row('Stop-hook drain (`attend inbox --drain --format hook`), steady state', none.drain, full.drain),
      row('`attend inbox`, steady state', none.inbox, full.inbox),
      row('the first drain to meet the flood', firstNone, firstFull),
    ].join('\n'),
  };
}
