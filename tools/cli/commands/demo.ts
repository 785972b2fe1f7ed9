// `attend demo`: the README's main command. A self-contained walkthrough on a temporary bus:
// two simulated Claude Code sessions (real processes with real session records, so identity
// resolves exactly as it does under Claude Code) and a human exchange messages through the
// real `attend` binary, and the demo prints what each of them sees.

import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ctx } from '../context.js';
import type { Io } from '../cli.js';
import { writePresence } from '../../bus/presence.js';

const BIN = fileURLToPath(new URL('../bin.js', import.meta.url));

interface Actor {
  label: string;
  cwd: string;
  env: Record<string, string>;
}

function procStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

export async function runDemo(ctx: Ctx, io: Io, opts: { keep: boolean }): Promise<void> {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'attend-demo-')));
  const busRoot = join(tmp, 'bus');
  const claudeDir = join(tmp, 'claude');
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  const sleepers: ReturnType<typeof spawn>[] = [];
  const baseEnv: Record<string, string> = {
    PATH: ctx.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    ATTEND_HOME: busRoot,
    CLAUDE_CONFIG_DIR: claudeDir,
    USER: 'aaron',
    NO_COLOR: '1',
  };
  try {
    const session = (name: string, project: string): Actor => {
      const cwd = join(tmp, 'work', project);
      mkdirSync(cwd, { recursive: true });
      // A stand-in for the claude process: a live pid with a real start time.
      const proc = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
      sleepers.push(proc);
      const pid = proc.pid as number;
      const sessionId = randomUUID();
      const record = { pid, sessionId, cwd, procStart: procStart(pid), startedAt: Date.now(), name, status: 'idle', kind: 'interactive' };
      writeFileSync(join(claudeDir, 'sessions', `${pid}.json`), JSON.stringify(record));
      return { label: `${name} (Claude Code session)`, cwd, env: { ...baseEnv, CLAUDECODE: '1', CLAUDE_PID: String(pid), CLAUDE_CODE_SESSION_ID: sessionId } };
    };
    const api = session('api', 'api');
    const web = session('web', 'web');
    const humanCwd = join(tmp, 'work');
    const human: Actor = { label: 'aaron (human, terminal)', cwd: humanCwd, env: baseEnv };
    // The human is live the way `attend chat` makes them live: a fresh heartbeat.
    writePresence(busRoot, { id: 'aaron', kind: 'human', origin: humanCwd, heartbeat: Date.now(), role: 'chat' });

    const run = (who: Actor, args: string[], note?: string): string => {
      io.out(`\n\u25B8 ${who.label} $ attend ${args.map(quote).join(' ')}${note ? `    # ${note}` : ''}`);
      const r = spawnSync(process.execPath, [BIN, ...args], { cwd: who.cwd, env: who.env, encoding: 'utf8' });
      const out = `${r.stdout}${r.stderr}`.trimEnd();
      if (out) io.out(out.replace(/^/gm, '  '));
      if (r.status !== 0) io.out(`  (exit ${r.status})`);
      return r.stdout.trim();
    };

    io.out(`attend demo: a temporary bus at ${busRoot}`);
    io.out('Two Claude Code sessions (api, web) and a human (aaron) talk over the bus.');
    run(api, ['whoami']);
    run(api, ['send', 'starting the schema migration; hold writes to users for 10 minutes'], 'to #open, everyone');
    run(human, ['send', '--to', 'web', 'please review the migration api is running'], 'directed: lands in web\'s tray');
    run(web, ['inbox'], 'web sees the broadcast and the directed message');
    run(web, ['reply', 'looking now; the users index needs a CONCURRENTLY'], 'threads to the newest message, back to aaron');
    run(api, ['send', '--to', 'web', '--to', 'aaron', 'migration done, writes are open again']);
    run(human, ['inbox']);
    const firstId = run(api, ['inbox', '--json']);
    let threadId: string | undefined;
    try {
      const page = JSON.parse(firstId) as { messages: { id: string; re: string | null }[] };
      threadId = page.messages.find((m) => m.re)?.id;
    } catch {
      // shown above
    }
    if (threadId) run(human, ['inbox', '--thread', threadId], 'the whole thread');
    run(human, ['send', '--to', 'nobody-here', 'hello?'], 'refused: nobody live by that name, nothing written');
    io.out('\nEvery message is one file under the bus root:');
    const ls = spawnSync('find', [join(busRoot, 'signals'), '-name', '*.signal'], { encoding: 'utf8' });
    io.out(ls.stdout.trim().split('\n').map((l) => `  ${l.slice(busRoot.length + 1)}`).join('\n'));

    // ---- Delivery (issue #4): both conduits for the `web` session.
    io.out('\nDelivery: what a Claude Code session sees without asking.');
    io.out(`\n\u25B8 ${web.label}: Monitor runs \`attend run\`; each stdout line is a notification for the model:`);
    const sensor = spawn(process.execPath, [BIN, 'run'], { cwd: web.cwd, env: web.env, stdio: ['ignore', 'pipe', 'ignore'] });
    sleepers.push(sensor);
    let monitor = '';
    sensor.stdout?.setEncoding('utf8').on('data', (d: string) => (monitor += d));
    const until = async (pred: () => boolean) => {
      for (const deadline = Date.now() + 8_000; !pred() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 25));
    };
    await until(() => /sensor (started|resumed)/.test(monitor));
    run(api, ['send', '--to', 'web', 'can you take the users index?'], 'arrives on web\'s Monitor within milliseconds');
    run(human, ['send', 'lunch in 10'], 'and so does #open');
    await until(() => monitor.includes('lunch in 10'));
    io.out(monitor.trimEnd().replace(/^/gm, '  \u2502 '));
    sensor.kill('SIGTERM');
    await new Promise((r) => sensor.once('exit', r));
    run(api, ['send', '--to', 'web', 'index is in, thanks'], 'while web\'s Monitor is not running');
    io.out(`\n\u25B8 ${web.label}: turn ends; the Stop hook runs \`attend inbox --drain\` and the model reads:`);
    const drained = spawnSync(process.execPath, [BIN, 'inbox', '--drain', '--format', 'plain'], { cwd: web.cwd, env: web.env, input: '{"stop_hook_active":false}', encoding: 'utf8' });
    io.out(drained.stdout.trimEnd().replace(/^/gm, '  \u2502 '));
    const again = spawnSync(process.execPath, [BIN, 'inbox', '--drain', '--format', 'plain'], { cwd: web.cwd, env: web.env, input: '{"stop_hook_active":true}', encoding: 'utf8' });
    io.out(`  (the next Stop finds nothing new and prints ${again.stdout.trim() === '' ? 'nothing' : 'more'}: one ledger, nothing shown twice)`);
  } finally {
    for (const p of sleepers) p.kill('SIGKILL');
    if (opts.keep) io.out(`\nkept: ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

function quote(a: string): string {
  return /^[\w@./:#=-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}
