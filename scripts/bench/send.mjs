// `attend send` wall time against `node -e 0` (issue #2: within 1.5×, medians, same run).
// The runs interleave so drift in machine load hits both sides alike.
//
// And the cost of the directory sync (issue 21 §5: a send that exits 0 has synced its
// directory; within 1.2× of the send without it): the same build, copied with syncDir made
// a no-op (`withoutDirSync`), runs interleaved with the real one. The product has no switch
// for it; the copy differs from the build by that one function body.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { standIn } from './latency.mjs';

/**
 * A copy of the build whose bin is `bin`, under `tmp`, with `patches` applied: each
 * `{ file, find, replace }` (file under dist/, `find` a global RegExp) must match exactly
 * once, so a renamed function fails the bench instead of measuring the unchanged code.
 * Returns the copy's bin.
 */
export function patchedBuild(bin, tmp, label, patches) {
  const repo = dirname(dirname(dirname(dirname(bin)))); // <repo>/dist/tools/cli/attend.cjs
  const copy = join(tmp, `build-${label}`);
  mkdirSync(copy, { recursive: true });
  cpSync(join(repo, 'dist'), join(copy, 'dist'), { recursive: true });
  cpSync(join(repo, 'package.json'), join(copy, 'package.json'));
  symlinkSync(join(repo, 'node_modules'), join(copy, 'node_modules'));
  for (const { file, find, replace } of patches) {
    const path = join(copy, 'dist', file);
    const src = readFileSync(path, 'utf8');
    const n = src.match(find)?.length ?? 0;
    if (n !== 1) throw new Error(`bench: ${file} has ${n} matches of ${find}, expected 1`);
    writeFileSync(path, src.replace(find, replace));
  }
  return join(copy, relative(repo, bin));
}

/** The build without the directory sync after a message's rename: syncDir returns at once (the send fast path's bundle and the ESM module). */
export const withoutDirSync = (bin, tmp) =>
  patchedBuild(
    bin,
    tmp,
    'without-dir-sync',
    ['tools/cli/fast-send.cjs', 'tools/bus/store/atomic.js'].map((file) => ({ file, find: /(function syncDir\([^)]*\) \{)/g, replace: '$1 return;' })),
  );

function time(args, env, cwd) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/**
 * The write alone, in this process: `writeSignals` of one message to #open, `n` times per
 * round into a bus of its own, alternating the real build and the copy without the directory
 * sync. Process start-up is most of a send's wall time and noisy on a shared machine; this
 * is the part the sync adds to. Median ms per message of each.
 */
async function writeCost(bin, bare, tmp, rounds, n) {
  const lib = async (b) => {
    const tools = dirname(dirname(b));
    const { writeSignals } = await import(pathToFileURL(join(tools, 'bus/store/messages.js')).href);
    const { createIdFactory } = await import(pathToFileURL(join(tools, 'wire/ids.js')).href);
    return { writeSignals, newId: createIdFactory({ now: Date.now, pid: process.pid, random: Math.random }) };
  };
  const sides = [
    ['with', await lib(bin)],
    ['without', await lib(bare)],
  ];
  const env = { from: 'external:bench@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'bench', to: '*', body: 'build is green' };
  const per = { with: [], without: [] };
  for (let r = 0; r < rounds; r++) {
    for (const [name, { writeSignals, newId }] of sides) {
      const root = join(tmp, `write-${name}-${r}`);
      mkdirSync(join(root, 'signals', '_broadcast'), { recursive: true, mode: 0o700 });
      writeSignals(root, [{ kind: 'open' }], newId(), env); // the directories exist from here on
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) writeSignals(root, [{ kind: 'open' }], newId(), env);
      per[name].push(Number(process.hrtime.bigint() - t0) / 1e6 / n);
    }
  }
  return { with: stats(per.with).median, without: stats(per.without).median };
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
  // One live stand-in session (a thread of this process, which attend takes as a session's
  // claude process: identity follows the ancestry), so `--to` has someone to resolve and an
  // agent can send.
  const sleeper = standIn(tmp, 'api');
  const agentEnv = { ...env, CLAUDECODE: '1', CLAUDE_PID: String(sleeper.proc.pid), CLAUDE_CODE_SESSION_ID: sleeper.sessionId };
  const bare = withoutDirSync(bin, tmp);
  const cases = [
    ['node -e 0', ['-e', '0'], env],
    ['attend send (human, #open)', [bin, 'send', 'build is green'], env],
    ['attend send (human, #open), no directory sync', [bare, 'send', 'build is green'], env],
    ['attend send (agent, #open)', [bin, 'send', 'build is green'], agentEnv],
    ['attend send --to api (human)', [bin, 'send', '--to', 'api', 'schema changed'], env],
    ['attend send --to api (human), no directory sync', [bare, 'send', '--to', 'api', 'schema changed'], env],
    ['attend whoami (full CLI, for scale)', [bin, 'whoami'], agentEnv],
  ];
  const times = new Map(cases.map(([name]) => [name, []]));
  try {
    for (const [, args, e] of cases) time(args, e, work); // warm the page cache
    for (let r = 0; r < rounds; r++) for (const [name, args, e] of cases) times.get(name).push(time(args, e, work));
  } finally {
    sleeper.proc.kill();
  }
  const write = await writeCost(bin, bare, tmp, quick ? 3 : 9, quick ? 50 : 200);
  const base = stats(times.get('node -e 0')).median;
  const rows = cases.map(([name]) => {
    const s = stats(times.get(name));
    return `| ${name} | ${s.median.toFixed(1)} | ${s.p90.toFixed(1)} | ${s.min.toFixed(1)} | ${(s.median / base).toFixed(2)}× |`;
  });
  const ratio = stats(times.get('attend send (human, #open)')).median / base;
  const med = (name) => stats(times.get(name)).median;
  const syncOpen = med('attend send (human, #open)') / med('attend send (human, #open), no directory sync');
  const syncTo = med('attend send --to api (human)') / med('attend send --to api (human), no directory sync');
  return {
    title: 'attend send startup',
    markdown: [
      `Target (issue #2): \`attend send\` median wall time ≤ 1.5× \`node -e 0\`. Measured: **${ratio.toFixed(2)}×** (${rounds} interleaved rounds).`,
      '',
      `Target (issue 21 §5): the directory sync that makes a sent message survive a power cut costs at most 1.2× the send without it. Measured: **${syncOpen.toFixed(2)}×** to #open, **${syncTo.toFixed(2)}×** with \`--to\` (medians; "no directory sync" is this build copied with \`syncDir\` made a no-op, run interleaved with it). The write alone, in one process (\`writeSignals\` to #open, unsigned, median of ${quick ? 3 : 9} rounds of ${quick ? 50 : 200}): ${write.with.toFixed(3)} ms with the sync, ${write.without.toFixed(3)} ms without, so the sync adds ${(write.with - write.without).toFixed(3)} ms to a send of ${med('attend send (human, #open)').toFixed(1)} ms.`,
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
