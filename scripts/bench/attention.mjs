// What attention (issue 23 §3) adds to a sensor wake and to a send, in one run.
//
// Sensor: one wake (`scanOnce`, in this process) per message to #open from a person, on a bus
// of its own per case: plain; with the reader in focus (its focus file is read each wake);
// with 20 quiet messages pending, which every wake reads and leaves for the drain. Send: the
// send verb to one live session, normal, urgent, and to a recipient in focus (the send reads
// the focus files to tell its sender). Cases interleave round by round. With
// ATTEND_BENCH_BASE=<another build's dist/tools/cli/attend.cjs> (the branch point's build),
// the plain wake and the plain send also run on that build, for the ratio against it.

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function lib(bin) {
  const tools = dirname(dirname(bin));
  const load = async (p) => import(pathToFileURL(join(tools, p)).href);
  return { scanOnce: (await load('sensor/scan.js')).scanOnce, m: await load('bus/store/messages.js'), nameLookup: (await load('wire/display.js')).nameLookup, ids: (await load('wire/ids.js')).createIdFactory };
}

const PERSON = { from: 'external:bench@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'bench', to: '*', body: 'build is green' };

/** Median µs of one wake that shows one new message; `setup(root, newId)` prepares the case's bus. */
function wakeCost(l, root, who, n, setup) {
  mkdirSync(join(root, 'signals', '_broadcast'), { recursive: true, mode: 0o700 });
  const newId = l.ids({ now: Date.now, pid: process.pid, random: Math.random });
  const deps = { root, now: Date.now, reporter: l.m.silentReporter, names: (me) => l.nameLookup([], me), write: () => {}, warn: () => {} };
  l.scanOnce(deps, who);
  setup(root, newId, l, () => l.scanOnce(deps, who));
  const times = [];
  for (let i = 0; i < n; i++) {
    l.m.writeSignal(root, { kind: 'open' }, newId(), PERSON);
    const t0 = process.hrtime.bigint();
    const r = l.scanOnce(deps, who);
    times.push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (r.delivered.length !== 1) throw new Error(`bench: a wake delivered ${r.delivered.length} messages, expected 1`);
  }
  return median(times);
}

function procStart(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

export default async function ({ bin, tmp, quick }) {
  const base = process.env.ATTEND_BENCH_BASE;
  const rounds = quick ? 4 : 12;
  const n = quick ? 50 : 200;
  const sid = '00000000-0000-4000-8000-0000000000aa';
  const who = { resolved: true, reason: 'bench', kind: 'agent', id: sid, from: `claude:${sid}`, origin: join(tmp, 'work', 'me'), user: 'bench', sessionId: sid };
  const focus = (root) => {
    mkdirSync(join(root, 'state', 'focus'), { recursive: true, mode: 0o700 });
    writeFileSync(join(root, 'state', 'focus', `${sid}.json`), JSON.stringify({ since: Date.now(), until: Date.now() + 3_600_000 }));
  };
  const here = await lib(bin);
  const busyWindow = (root, newId, l, wakeOnce) => {
    for (let i = 0; i < 1_500; i++) {
      l.m.writeSignal(root, { kind: 'open' }, newId(), PERSON);
      wakeOnce();
    }
  };
  const wakeCases = [
    ['plain', here, () => {}],
    ['reader in focus', here, (root) => focus(root)],
    ['20 quiet messages pending', here, (root, newId, l) => {
      for (let i = 0; i < 20; i++) l.m.writeSignal(root, { kind: 'open' }, newId(), { ...PERSON, urgency: 'quiet', body: `fyi ${i}` });
    }],
    ...(base ? [['plain, base build', await lib(base), () => {}]] : []),
    // The grace window full: every message shown in the last 30 s is still in the ledger's
    // consumed set above the watermark (a busy #open), and each wake asks it and adds to it.
    ['1,500 shown in the last 30 s', here, busyWindow],
    ...(base ? [['1,500 shown in the last 30 s, base build', await lib(base), busyWindow]] : []),
  ];
  const wake = new Map(wakeCases.map(([name]) => [name, []]));
  // Each round starts at another case, so none is always the first (or the last) of a round.
  const rotated = (r) => wakeCases.map((_, i) => wakeCases[(i + r) % wakeCases.length]);
  for (let r = 0; r < rounds; r++) for (const [name, l, setup] of rotated(r)) wake.get(name).push(wakeCost(l, join(tmp, `wake-${r}-${wake.get(name).length}-${name.replace(/\W/g, '')}`), who, n, setup));

  // Sends as the person to one live stand-in session: the send verb in this process, a new
  // context per send (identity, live roster, focus files, the write and its sync), since the
  // process start around it is the same for both builds (the fast-send bundle grew by ~5 KB).
  const home = join(tmp, 'home');
  const claude = join(tmp, 'claude');
  const work = join(tmp, 'work', 'api');
  for (const d of [join(claude, 'sessions'), home, work]) mkdirSync(d, { recursive: true });
  const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const api = '00000000-0000-4000-8000-0000000000bb';
  writeFileSync(join(claude, 'sessions', `${sleeper.pid}.json`), JSON.stringify({ pid: sleeper.pid, sessionId: api, cwd: work, procStart: procStart(sleeper.pid), name: 'api', status: 'idle' }));
  const env = (bus) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ATTEND_HOME: join(tmp, bus), CLAUDE_CONFIG_DIR: claude, USER: 'bench' });
  mkdirSync(join(tmp, 'bus-focus', 'state', 'focus'), { recursive: true, mode: 0o700 });
  writeFileSync(join(tmp, 'bus-focus', 'state', 'focus', `${api}.json`), JSON.stringify({ since: Date.now(), until: Date.now() + 3_600_000 }));
  const verbs = async (b) => {
    const tools = dirname(dirname(b));
    return { createVerbCtx: (await import(pathToFileURL(join(tools, 'verbs/context.js')).href)).createVerbCtx, runSend: (await import(pathToFileURL(join(tools, 'verbs/send.js')).href)).runSend };
  };
  const v = await verbs(bin);
  const vb = base ? await verbs(base) : undefined;
  const sendCases = [
    ['send --to api', v, 'bus', {}],
    ['send --urgent --to api', v, 'bus', { urgency: 'urgent' }],
    ['send --to api, api in focus', v, 'bus-focus', {}],
    ...(vb ? [['send --to api, base build', vb, 'bus-base', {}]] : []),
  ];
  const sendOnce = ([, l, bus, extra]) => {
    const t0 = process.hrtime.bigint();
    l.runSend(l.createVerbCtx({ env: env(bus), cwd: work, pid: process.pid }), { message: 'schema changed', to: ['api'], ...extra });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const send = new Map(sendCases.map(([name]) => [name, []]));
  try {
    for (const c of sendCases) sendOnce(c);
    for (let r = 0; r < (quick ? 20 : 200); r++) for (const c of r % 2 ? sendCases : [...sendCases].reverse()) send.get(c[0]).push(sendOnce(c));
  } finally {
    sleeper.kill('SIGKILL');
  }
  const row = (m, name, first, unit, digits) => `| ${name} | ${median(m.get(name)).toFixed(digits)} ${unit} | ${(median(m.get(name)) / median(m.get(first))).toFixed(2)}× |`;
  return {
    title: 'Attention: what urgent, quiet and focus add',
    markdown: [
      `A sensor wake that shows one new message (\`scanOnce\` in one process, median of ${rounds} rounds of ${n} wakes, each case on a bus of its own), and the send verb as the person to one live session, in one process with a new context per send (median of ${quick ? 20 : 200} interleaved rounds). Ratios are against the first row of each table${base ? '; the base build is the branch point\'s, run interleaved with this one' : ''}.`,
      '',
      '| sensor wake | median | vs plain |',
      '| --- | ---: | ---: |',
      ...wakeCases.map(([name]) => row(wake, name, 'plain', 'µs', 0)),
      '',
      '| send | median | vs the first |',
      '| --- | ---: | ---: |',
      ...sendCases.map(([name]) => row(send, name, 'send --to api', 'ms', 2)),
      '',
      'A quiet message, or one the reader\'s focus holds back, stays pending for the Stop hook, so every wake until then reads it again from disk: the third row is that cost for 20 of them. The "1,500 shown" rows deliver 1,500 messages first, so the ledger\'s consumed set above the watermark holds them all (its grace window is 30 s) while the wakes are timed: what a wake costs on a busy bus. Send and wake figures on this shared machine move by ±20 % between rounds; compare within a run.',
    ].join('\n'),
  };
}
