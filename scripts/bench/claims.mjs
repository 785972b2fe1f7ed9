// The PreToolUse claim check (issue 23 §2, Performance: ≤ 1.3× `node -e 0`, since it runs
// before every edit): `attend hook pre-tool-use` as Claude Code runs it, the payload on stdin,
// through the executable npm links (attend.cjs → fast-claims.cjs). Three cases: an Edit of a
// file another live session claimed (the warning is printed), an Edit of a file nobody
// claimed on a bus that has claims (keyed, checked, silent), and an Edit on a bus with no
// claims at all. Interleaved with `node -e 0`, median of the rounds.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { fakeSession } from './latency.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** CPU time (ms) of this process's waited-for children so far: cutime + cstime of /proc/self/stat, in 10 ms ticks. */
function childCpuMs() {
  const f = readFileSync('/proc/self/stat', 'utf8').slice(readFileSync('/proc/self/stat', 'utf8').lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10;
}

function timed(args, opts, cpu) {
  const c0 = cpu ? childCpuMs() : 0;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', ...opts });
  const ms = performance.now() - t0;
  if (cpu) cpu.push(childCpuMs() - c0);
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, out: r.stdout };
}

export default async function ({ bin, tmp, quick }) {
  const rounds = quick ? 5 : 25;
  const dir = mkdtempSync(join(tmp, 'claims-'));
  const repo = join(dir, 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  for (const f of ['parser.ts', 'lexer.ts']) writeFileSync(join(repo, 'src', f), 'export {};\n');
  const git = (...a) => spawnSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=b', ...a], { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'root');
  const owner = fakeSession(dir, 'owner');
  const editor = fakeSession(dir, 'editor');
  const empty = fakeSession(mkdtempSync(join(tmp, 'claims-empty-')), 'alone');
  try {
    // The owner's claim, written through the bus module as `attend claim` writes it (a stand-in
    // session is no ancestor of a process the bench starts, so it cannot run attend as itself).
    const { keyOf, writeClaim } = await import(pathToFileURL(join(dirname(dirname(bin)), 'bus', 'claims', 'index.js')).href);
    const key = keyOf(owner.root, join(repo, 'src', 'parser.ts'), repo);
    const stat = readFileSync(`/proc/${owner.proc.pid}/stat`, 'utf8');
    const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const now = Date.now();
    writeClaim(owner.root, { v: 1, project: key.project, worktree: key.worktree, pattern: key.rel, holder: { id: owner.sessionId, kind: 'agent', name: 'owner', pid: owner.proc.pid, procStart }, reason: 'bench', at: now, expires: now + 3_600_000 });
    const payload = (s, file) => JSON.stringify({ session_id: s.sessionId, cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: file, old_string: 'a', new_string: 'b' } });
    const cases = [
      { name: 'Edit of a claimed file (warns)', env: editor.env, input: payload(editor, join(repo, 'src', 'parser.ts')), warns: true },
      { name: 'Edit of an unclaimed file, bus with claims', env: editor.env, input: payload(editor, join(repo, 'src', 'lexer.ts')), warns: false },
      { name: 'Edit, bus with no claims', env: empty.env, input: payload(empty, join(repo, 'src', 'lexer.ts')), warns: false },
    ].map((c) => ({ ...c, times: [] }));
    // A warm-up each (page cache, the repository cache on the bus), and a check of what each prints.
    for (const c of cases) {
      const { out } = timed([bin, 'hook', 'pre-tool-use'], { env: c.env, input: c.input });
      if (out.includes('another live party') !== c.warns) throw new Error(`${c.name}: unexpected output ${JSON.stringify(out.slice(0, 200))}`);
    }
    // A second floor, an empty CommonJS file: node's start without `-e`'s own work.
    const emptyFile = join(dir, 'empty.cjs');
    writeFileSync(emptyFile, '');
    const floor = [];
    const emptyTimes = [];
    const floorCpu = [];
    const emptyCpu = [];
    for (const c of cases) c.cpu = [];
    for (let i = 0; i < rounds; i++) {
      floor.push(timed(['-e', '0'], { env: editor.env }, floorCpu).ms);
      emptyTimes.push(timed([emptyFile], { env: editor.env }, emptyCpu).ms);
      for (const c of cases) c.times.push(timed([bin, 'hook', 'pre-tool-use'], { env: c.env, input: c.input }, c.cpu).ms);
    }
    // CPU per run, summed over the rounds (ticks are 10 ms): what a loaded machine's wall times hide.
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const nodeCpu = mean(floorCpu);
    const node = median(floor);
    const bare = median(emptyTimes);
    for (const c of cases) c.ms = median(c.times);
    const worst = Math.max(...cases.map((c) => c.ms / node));
    const markdown = [
      `\`attend hook pre-tool-use\` as Claude Code runs it before an edit (the payload on stdin; attend.cjs → the bundled fast-claims.cjs), against \`node -e 0\`. Median of ${rounds} interleaved rounds after one warm-up each, every process with the same environment (the session’s).`,
      '',
      '| case | median (ms) | × node -e 0 | × node empty.cjs | CPU per run (ms) | CPU × node -e 0 |',
      '| --- | --- | --- | --- | --- | --- |',
      `| node -e 0 | ${node.toFixed(1)} | 1.00 | ${(node / bare).toFixed(2)} | ${nodeCpu.toFixed(1)} | 1.00 |`,
      `| node empty.cjs | ${bare.toFixed(1)} | ${(bare / node).toFixed(2)} | 1.00 | ${mean(emptyCpu).toFixed(1)} | ${(mean(emptyCpu) / nodeCpu).toFixed(2)} |`,
      ...cases.map((c) => `| ${c.name} | ${c.ms.toFixed(1)} | ${(c.ms / node).toFixed(2)} | ${(c.ms / bare).toFixed(2)} | ${mean(c.cpu).toFixed(1)} | ${(mean(c.cpu) / nodeCpu).toFixed(2)} |`),
      '',
      `- Goal: ≤ 1.3× \`node -e 0\`: worst case ${worst.toFixed(2)}× in this run, ${worst <= 1.3 ? 'met' : 'not met'}; against an empty file, ${Math.max(...cases.map((c) => c.ms / bare)).toFixed(2)}×; in CPU time, ${Math.max(...cases.map((c) => mean(c.cpu) / nodeCpu)).toFixed(2)}×. Load average at the end of the run: ${loadavg()[0].toFixed(1)} on ${cpus().length} cores${loadavg()[0] > cpus().length ? ' (a loaded machine: wall times are mostly waiting for a core, and the CPU column is the steadier figure)' : ''}.`,
    ].join('\n');
    return { title: 'PreToolUse claim check', markdown };
  } finally {
    for (const s of [owner, editor, empty]) s.proc.kill('SIGKILL');
  }
}
