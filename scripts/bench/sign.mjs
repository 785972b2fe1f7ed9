// Signing and verification cost (issue 14, Performance):
//   - `attend send` wall time with signing against the same verb built from the commit before
//     signing landed (goal ≤ 1.1×, medians of interleaved runs);
//   - `attend inbox --drain` over 1,000 new messages, all signed (each verified) against all
//     unsigned (goal ≤ 1.2×);
//   - the sensor's per-message read (readMessage, which verifies) over 1,000 messages, in
//     process, signed against unsigned (goal ≤ 1.2×).
// The unsigned side still looks for a sidecar (one failed open per message): that is what
// every reader does now, so it is the honest "without verification" floor of this build.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fakeSession } from './latency.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function time(args, env, cwd, input) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, cwd, input, stdio: ['pipe', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Build the commit before signing landed into tmp/base; returns its bin and commit. */
function buildBaseline(tmp) {
  const added = execFileSync('git', ['-C', repo, 'log', '--diff-filter=A', '--format=%H', '--', 'tools/bus/signing.ts'], { encoding: 'utf8' }).trim().split('\n').pop();
  const commit = execFileSync('git', ['-C', repo, 'rev-parse', '--short', `${added}^`], { encoding: 'utf8' }).trim();
  const dir = join(tmp, 'base');
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C '${repo}' archive ${commit} | tar -x -C '${dir}'`]);
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  // Type errors against today's node_modules (a dependency dropped since, like chokidar for
  // the sensor) do not matter for the send path measured here: tsc still emits.
  spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'ignore' });
  if (!existsSync(join(dir, 'dist/tools/cli/attend.cjs'))) throw new Error(`the baseline ${commit} did not build`);
  execFileSync(process.execPath, ['scripts/postbuild.mjs'], { cwd: dir, stdio: 'inherit' });
  return { bin: join(dir, 'dist/tools/cli/attend.cjs'), commit };
}

async function lib(bin) {
  const tools = dirname(dirname(bin));
  const imp = (p) => import(pathToFileURL(join(tools, p)).href);
  return { ...(await imp('bus/signals.js')), ...(await imp('bus/signing.js')), ...(await imp('wire/ids.js')), ...(await imp('wire/names.js')) };
}

async function sendRatio(bin, tmp, rounds) {
  const base = buildBaseline(tmp);
  const s = fakeSession(tmp, 'send');
  const human = { ...s.env };
  for (const k of ['CLAUDECODE', 'CLAUDE_PID', 'CLAUDE_CODE_SESSION_ID']) delete human[k];
  const cases = [
    ['baseline: attend send (human, #open)', [base.bin, 'send', 'build is green'], human],
    ['signed: attend send (human, #open)', [bin, 'send', 'build is green'], human],
    ['baseline: attend send (agent, #open)', [base.bin, 'send', 'build is green'], s.env],
    ['signed: attend send (agent, #open)', [bin, 'send', 'build is green'], s.env],
  ];
  const times = new Map(cases.map(([n]) => [n, []]));
  try {
    for (const [, args, env] of cases) time(args, env, s.cwd); // warm caches; makes the keys
    for (let r = 0; r < rounds; r++) for (const [n, args, env] of cases) times.get(n).push(time(args, env, s.cwd));
  } finally {
    s.proc.kill('SIGKILL');
  }
  const m = (n) => median(times.get(n));
  return {
    commit: base.commit,
    rows: cases.map(([n]) => `| ${n} | ${m(n).toFixed(1)} |`),
    human: m('signed: attend send (human, #open)') / m('baseline: attend send (human, #open)'),
    agent: m('signed: attend send (agent, #open)') / m('baseline: attend send (agent, #open)'),
  };
}

async function drainRatio(bin, tmp, runs) {
  const L = await lib(bin);
  const signer = L.createSigner({ keysDir: join(tmp, 'bench-keys'), root: join(tmp, 'bus'), host: 'bench', now: Date.now });
  const newId = L.createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const out = { signed: [], unsigned: [] };
  for (let r = 0; r < runs; r++) {
    for (const kind of ['signed', 'unsigned']) {
      const s = fakeSession(tmp, `drain-${kind}-${r}`);
      const tray = { kind: 'tray', key: L.attendKey(s.cwd) };
      const node = kind === 'signed' ? 'bench-signer' : 'bench-plain';
      try {
        // Start the ledger (cold start), then 1,000 new messages for a warm drain.
        time([bin, 'inbox', '--drain', '--format', 'plain'], s.env, s.cwd, '{}');
        for (let i = 0; i < 1000; i++) {
          L.writeSignal(s.root, tray, newId(), { from: `claude:${node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: node, to: s.sessionId, body: `new ${i}` }, kind === 'signed' ? signer : undefined);
        }
        out[kind].push(time([bin, 'inbox', '--drain', '--format', 'plain'], s.env, s.cwd, '{}'));
      } finally {
        s.proc.kill('SIGKILL');
      }
    }
  }
  return { signed: median(out.signed), unsigned: median(out.unsigned) };
}

async function readRatio(bin, tmp, rounds) {
  const L = await lib(bin);
  const root = join(tmp, 'bus-read');
  const signer = L.createSigner({ keysDir: join(tmp, 'read-keys'), root, host: 'bench', now: Date.now });
  const newId = L.createIdFactory({ now: Date.now, pid: process.pid + 1, random: Math.random });
  const scopes = { signed: { kind: 'channel', name: 'signed' }, unsigned: { kind: 'channel', name: 'unsigned' } };
  const ids = { signed: [], unsigned: [] };
  for (const kind of ['signed', 'unsigned']) {
    const node = kind === 'signed' ? 'reader-signer' : 'reader-plain';
    for (let i = 0; i < 1000; i++) {
      const id = newId();
      ids[kind].push(id);
      L.writeSignal(root, scopes[kind], id, { from: `claude:${node}`, project: 'b', cwd: '/b', fromKind: 'agent', fromId: node, to: '*', body: `m ${i}` }, kind === 'signed' ? signer : undefined);
    }
  }
  const t = { signed: [], unsigned: [] };
  let bad = 0;
  for (let r = 0; r < rounds; r++) {
    for (const kind of ['signed', 'unsigned']) {
      const t0 = performance.now();
      for (const id of ids[kind]) if (L.readMessage(root, scopes[kind], id, L.silentReporter).sig === 'bad') bad++;
      t[kind].push(performance.now() - t0);
    }
  }
  if (bad > 0) throw new Error(`${bad} messages failed to verify`);
  return { signed: median(t.signed), unsigned: median(t.unsigned) };
}

/** permit() per message with 1 grant and with 1,000 (issue 14: O(1) per message). */
async function permitCost(bin, quick) {
  const { permit, indexPolicy, DEFAULT_POLICY } = await import(pathToFileURL(join(dirname(dirname(bin)), 'wire/permit.js')).href);
  const lineage = { parentOf: (id) => (id.startsWith('w') ? 'lead' : undefined) };
  const checks = quick ? 20_000 : 200_000;
  const perCheck = (grants) => {
    const allow = Array.from({ length: grants }, (_, i) => ({ from: `s${i}`, to: `r${i}` }));
    const ix = indexPolicy({ ...DEFAULT_POLICY, mode: 'groups', allow });
    const runs = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      let ok = 0;
      for (let i = 0; i < checks; i++) if (permit({ from: `s${i % grants}`, fromKind: 'agent', to: `r${(i * 7) % grants}` }, ix, lineage).ok) ok++;
      runs.push(((performance.now() - t0) * 1000) / checks);
      if (ok === 0) throw new Error('no grant matched');
    }
    return median(runs);
  };
  return { one: perCheck(1), thousand: perCheck(1000) };
}

export default async function ({ bin, tmp, quick }) {
  const perm = await permitCost(bin, quick);
  const send = await sendRatio(bin, tmp, quick ? 8 : 30);
  const drain = await drainRatio(bin, tmp, quick ? 3 : 7);
  const read = await readRatio(bin, tmp, quick ? 3 : 9);
  return {
    title: 'Signing and verification (issue 14)',
    markdown: [
      `\`attend send\` with signing against the same build from commit ${send.commit} (before signing), interleaved, median ms. Goal ≤ 1.1×. Measured: **${send.human.toFixed(2)}×** (human), **${send.agent.toFixed(2)}×** (agent).`,
      '',
      '| command | median ms |',
      '| --- | ---: |',
      ...send.rows,
      '',
      `Verification of 1,000 new messages (goal ≤ 1.2×):`,
      '',
      '| reader | unsigned | signed (each verified) | ratio |',
      '| --- | ---: | ---: | ---: |',
      `| \`attend inbox --drain --format plain\` (process, 1,000 new) | ${drain.unsigned.toFixed(0)} ms | ${drain.signed.toFixed(0)} ms | ${(drain.signed / drain.unsigned).toFixed(2)}× |`,
      `| readMessage × 1,000 (the sensor's per-message read, in process) | ${read.unsigned.toFixed(1)} ms | ${read.signed.toFixed(1)} ms | ${(read.signed / read.unsigned).toFixed(2)}× |`,
      '',
      'The unsigned side still looks for a sidecar (one failed open per message), as every reader of this build does.',
      '',
      `Permission check (\`permit\`, in process, per message, median of 5 runs): **${perm.one.toFixed(2)} µs** with 1 grant, **${perm.thousand.toFixed(2)} µs** with 1,000 grants (${(perm.thousand / perm.one).toFixed(2)}×; the grants are hash-set lookups).`,
    ].join('\n'),
  };
}
