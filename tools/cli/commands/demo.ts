// `attend demo`: the README's main command. A self-contained walkthrough on a temporary bus:
// two simulated Claude Code sessions (real processes with real session records, so identity
// resolves exactly as it does under Claude Code) and a human exchange messages through the
// real `attend` binary, and the demo prints what each of them sees. Identity comes from the
// process ancestry (docs/trust.md, "Who is speaking"), so each session's commands are run by
// its stand-in process, as Claude Code runs its tools: they are that process's children.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { procInfoFromProc, userName } from '../../identity/system.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ctx } from '../context.js';
import type { Io } from '../io.js';
import { shellQuote } from './install.js';
import { readSensor } from '../../bus/delivery/index.js';
import { writePresence } from '../../bus/presence/index.js';
import { sanitizeMemberId } from '../../wire/envelope.js';

// The executable as npm links it, so the demo shows exactly what a user runs.
const BIN = fileURLToPath(new URL('../attend.cjs', import.meta.url));

interface Actor {
  label: string;
  cwd: string;
  env: Record<string, string>;
  /** The stand-in claude process that runs this actor's commands; none for the person. */
  host?: ChildProcess;
}

/** A command in flight: run by the demo itself (the person) or by a session's stand-in. */
interface Step {
  /** The command's pid, once it runs. */
  pid: Promise<number | undefined>;
  kill(signal: NodeJS.Signals): void;
  onStdout(fn: (text: string) => void): void;
  done: Promise<{ status: number | null; stdout: string; stderr: string; error?: Error }>;
}

function procStart(pid: number): string | undefined {
  // Without /proc the record is matched by pid alone.
  return procInfoFromProc(pid)?.start;
}

// A stand-in for a claude process: it runs the commands the demo gives it over its IPC
// channel as its own children (as Claude Code runs its tools), streams their output back, and
// ends with them when the demo ends it or dies (the channel closes), so a killed demo leaves
// nothing running. The demo's directory rides in argv so a test can see none outlived it.
const HOST = `const { spawn } = require('node:child_process');
const kids = new Map();
process.on('disconnect', () => { for (const k of kids.values()) k.kill('SIGKILL'); process.exit(0); });
process.on('message', (m) => {
  if (m.op === 'kill') return void kids.get(m.id)?.kill(m.signal);
  const k = spawn(m.cmd, m.args, { cwd: m.cwd, env: m.env, stdio: [m.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  kids.set(m.id, k);
  process.send({ id: m.id, pid: k.pid });
  if (m.input !== undefined) k.stdin.end(m.input);
  k.stdout.on('data', (d) => process.send({ id: m.id, out: d.toString() }));
  k.stderr.on('data', (d) => process.send({ id: m.id, err: d.toString() }));
  k.on('error', (e) => process.send({ id: m.id, error: e.message }));
  k.on('close', (status) => { kids.delete(m.id); process.send({ id: m.id, status }); });
});`;

let stepIds = 0;

/** Run `attend <args>` as `who`: a child of its stand-in claude process, or of the demo for the person. */
function startStep(who: Actor, args: string[], input?: string): Step {
  let stdout = '';
  let stderr = '';
  const listeners: ((text: string) => void)[] = [];
  const out = (t: string) => {
    stdout += t;
    for (const l of listeners) l(t);
  };
  const host = who.host;
  if (!host) {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: who.cwd, env: who.env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin?.end(input);
    child.stdout?.on('data', (d: Buffer) => out(d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<Awaited<Step['done']>>((resolve) => {
      child.on('error', (error) => resolve({ status: null, stdout, stderr, error }));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    return { pid: Promise.resolve(child.pid), kill: (sig) => void child.kill(sig), onStdout: (fn) => void listeners.push(fn), done };
  }
  const id = ++stepIds;
  let gotPid: (pid: number | undefined) => void = () => {};
  const pid = new Promise<number | undefined>((resolve) => (gotPid = resolve));
  const done = new Promise<Awaited<Step['done']>>((resolve) => {
    const onMessage = (m: { id: number; pid?: number; out?: string; err?: string; error?: string; status?: number | null }) => {
      if (m.id !== id) return;
      if ('pid' in m) gotPid(m.pid);
      if (m.out !== undefined) out(m.out);
      if (m.err !== undefined) stderr += m.err;
      const end = (r: Awaited<Step['done']>) => {
        host.off('message', onMessage);
        host.off('exit', onExit);
        gotPid(undefined);
        resolve(r);
      };
      if (m.error !== undefined) end({ status: null, stdout, stderr, error: new Error(m.error) });
      else if ('status' in m) end({ status: m.status ?? null, stdout, stderr });
    };
    const onExit = () => resolve({ status: null, stdout, stderr, error: new Error('the stand-in session process ended') });
    host.on('message', onMessage);
    host.once('exit', onExit);
  });
  host.send({ op: 'run', id, cmd: process.execPath, args: [BIN, ...args], cwd: who.cwd, env: who.env, ...(input !== undefined ? { input } : {}) });
  return { pid, kill: (signal) => void host.send({ op: 'kill', id, signal }), onStdout: (fn) => void listeners.push(fn), done };
}

/** What is running right now, so an interrupt can stop it before removing the bus. */
interface Running {
  sleepers: ChildProcess[];
  step: Step | null;
}

export async function runDemo(ctx: Ctx, io: Io, opts: { keep: boolean }): Promise<void> {
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'attend-demo-')));
  const running: Running = { sleepers: [], step: null };
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    for (const p of running.sleepers) p.kill('SIGKILL');
    if (!opts.keep) rmSync(tmp, { recursive: true, force: true });
  };
  // Ctrl-C mid-demo still removes the temporary bus: stop the step in flight first, so it
  // cannot write into the directory after it is gone.
  const onSignal = (sig: NodeJS.Signals) => {
    const step = running.step;
    const finish = () => {
      cleanup();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    };
    if (step) {
      void step.done.then(finish);
      step.kill('SIGKILL');
    } else finish();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await walkthrough(ctx, io, tmp, running);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    cleanup();
    if (opts.keep) io.out(`\nkept: ${tmp}`);
  }
}

async function walkthrough(ctx: Ctx, io: Io, tmp: string, running: Running): Promise<void> {
  const busRoot = join(tmp, 'bus');
  const claudeDir = join(tmp, 'claude');
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  const baseEnv: Record<string, string> = {
    PATH: ctx.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    ATTEND_HOME: busRoot,
    CLAUDE_CONFIG_DIR: claudeDir,
    NO_COLOR: '1',
  };
  const session = (name: string, project: string): Actor => {
    const cwd = join(tmp, 'work', project);
    mkdirSync(cwd, { recursive: true });
    const proc = spawn(process.execPath, ['-e', HOST, tmp], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    running.sleepers.push(proc);
    const pid = proc.pid;
    if (pid === undefined) throw new Error('could not start a stand-in session process');
    const sessionId = randomUUID();
    const record = { pid, sessionId, cwd, procStart: procStart(pid), startedAt: Date.now(), name, status: 'idle', kind: 'interactive' };
    writeFileSync(join(claudeDir, 'sessions', `${pid}.json`), JSON.stringify(record));
    return { label: `${name} (Claude Code session)`, cwd, env: { ...baseEnv, CLAUDECODE: '1', CLAUDE_PID: String(pid), CLAUDE_CODE_SESSION_ID: sessionId }, host: proc };
  };
  const api = session('api', 'api');
  const web = session('web', 'web');
  const humanCwd = join(tmp, 'work');
  // The person is whoever runs the demo: attend names a person by the user the process runs as,
  // never by a variable (issue 14 §6).
  const person = sanitizeMemberId(userName());
  const human: Actor = { label: `${person} (human, terminal)`, cwd: humanCwd, env: baseEnv };
  // The human is live the way `attend chat` makes them live: a fresh heartbeat.
  writePresence(busRoot, { id: person, kind: 'human', origin: humanCwd, heartbeat: Date.now(), role: 'chat' });

  // Steps run asynchronously so an interrupt is handled between and during them.
  const attend = async (who: Actor, args: string[], input?: string) => {
    const step = startStep(who, args, input);
    running.step = step;
    const r = await step.done;
    running.step = null;
    return r;
  };
  const run = async (who: Actor, args: string[], note?: string): Promise<string> => {
    io.out(`\n\u25B8 ${who.label} $ attend ${args.map(shellQuote).join(' ')}${note ? `    # ${note}` : ''}`);
    const r = await attend(who, args);
    if (r.error) {
      io.out(`  (could not run: ${r.error.message})`);
      return '';
    }
    const out = `${r.stdout}${r.stderr}`.trimEnd();
    if (out) io.out(out.replace(/^/gm, '  '));
    if (r.status !== 0) io.out(`  (exit ${r.status})`);
    return r.stdout.trim();
  };

  io.out(`attend demo: a temporary bus at ${busRoot}`);
  io.out(`Two Claude Code sessions (api, web) and a human (${person}) talk over the bus.`);
  await run(api, ['whoami']);
  await run(api, ['send', 'starting the schema migration; hold writes to users for 10 minutes'], 'to #open, everyone');
  await run(human, ['send', '--to', 'web', 'please review the migration api is running'], "directed: lands in web's tray");
  await run(web, ['inbox'], 'web sees the broadcast and the directed message');
  await run(web, ['reply', 'looking now; the users index needs a CONCURRENTLY'], `threads to the newest message, back to ${person}`);
  await run(api, ['send', '--to', 'web', '--to', person, 'migration done, writes are open again'], 'one message, two trays, both names in to');
  await run(human, ['inbox'], `${person}'s inbox: the reply, the fan-out, the broadcast`);
  // The thread: the person's message and web's reply to it, found the way a script would (--json).
  let replyId: string | undefined;
  try {
    const page = JSON.parse((await attend(human, ['inbox', '--json'])).stdout) as { messages: { id: string; re: string | null }[] };
    replyId = page.messages.find((m) => m.re)?.id;
  } catch {
    // shown above
  }
  if (replyId) await run(human, ['inbox', '--thread', replyId], 'the whole thread, oldest first');
  else io.out('\n  (no reply found to show a thread)');
  await run(human, ['send', '--to', 'nobody-here', 'hello?'], 'refused: nobody live by that name, nothing written');

  // ---- Channels and presence (issue #3).
  io.out('\nChannels and presence: a topic with its own members, and who is live.');
  await run(api, ['join', 'db'], 'creates #db and joins it');
  await run(api, ['send', '--channel', 'db', 'vacuum scheduled for 02:00'], 'written before web is in the channel');
  await run(api, ['invite', 'web', 'db'], 'web is told, and owed the recent history');
  await run(web, ['join', 'db'], 'joining after an invite: the backlog comes with it');
  await run(human, ['channels']);
  await run(human, ['peers'], 'waiting: no conduit of these sessions runs yet (no sensor, no Stop hook)');
  io.out('\nEvery message is one file under the bus root:');
  io.out(listSignals(join(busRoot, 'signals')).map((l) => `  signals/${l}`).join('\n'));

  // ---- Delivery (issue #4): both conduits for the `web` session.
  io.out('\nDelivery: what a Claude Code session sees without asking.');
  io.out(`\n\u25B8 ${web.label}: Monitor runs \`attend run\`; each stdout line is a notification for the model:`);
  // The sensor is the web session's child, as Monitor runs it; the stand-in ends it with itself.
  const sensor = startStep(web, ['run']);
  const sensorPid = await sensor.pid;
  let monitor = '';
  sensor.onStdout((d) => (monitor += d));
  const until = async (pred: () => boolean) => {
    for (const deadline = Date.now() + 8_000; !pred() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 25));
  };
  // The sensor prints nothing until there is something to say (issue #11 §7): its claim says it is up.
  await until(() => readSensor(busRoot, web.env.CLAUDE_CODE_SESSION_ID ?? '')?.pid === sensorPid);
  await run(api, ['send', '--to', 'web', 'can you take the users index?'], "arrives on web's Monitor within milliseconds");
  await run(human, ['send', 'lunch in 10'], 'and so does #open');
  await until(() => monitor.includes('lunch in 10'));
  io.out(monitor.trimEnd().replace(/^/gm, '  \u2502 '));
  sensor.kill('SIGTERM');
  await sensor.done;
  await run(api, ['send', '--to', 'web', 'index is in, thanks'], "while web's Monitor is not running");
  io.out(`\n\u25B8 ${web.label}: turn ends; the Stop hook runs \`attend inbox --drain\` and the model reads:`);
  const drained = await attend(web, ['inbox', '--drain', '--format', 'plain'], '{"stop_hook_active":false}');
  io.out(drained.stdout.trimEnd().replace(/^/gm, '  \u2502 '));
  const again = await attend(web, ['inbox', '--drain', '--format', 'plain'], '{"stop_hook_active":true}');
  io.out(`  (the next Stop finds nothing new and prints ${again.stdout.trim() === '' ? 'nothing' : 'more'}: one ledger, nothing shown twice)`);
}

function listSignals(dir: string): string[] {
  const out: string[] = [];
  let scopes: string[];
  try {
    scopes = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const scope of scopes) {
    try {
      for (const f of readdirSync(join(dir, scope)).sort()) if (f.endsWith('.signal')) out.push(`${scope}/${f}`);
    } catch {
      // not a directory
    }
  }
  return out;
}

