// Sessions that are a real process tree, for the e2e tier: each is a live node process with a
// Claude Code session record (as test/e2e/identity.test.ts and policy.test.ts make), and
// every `attend` it runs is its own child, started with the variables Claude Code gives its
// tools. A worker is started by its lead's process, so it is a real child of the lead: the
// ancestry, not a variable or a hand-written lineage file, makes it the lead's child.
//
// Each session listens on a Unix socket for what to run; the test talks to it there.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { BIN, type RunResult, type TempBus, makeTempBus, waitFor } from './bus.js';

// The session process: writes its record, then runs what it is asked over its socket. `run`
// is an attend command as its tool would run it; `spawn` starts a child session (a worker).
const HOST = `
const { readFileSync, writeFileSync, rmSync, mkdirSync } = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');
const net = require('node:net');
const [sessionId, cwd, sock, name, bin, script] = process.argv.slice(1);
const stat = readFileSync('/proc/self/stat', 'utf8');
const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
mkdirSync(cwd, { recursive: true });
const record = process.env.CLAUDE_CONFIG_DIR + '/sessions/' + process.pid + '.json';
writeFileSync(record, JSON.stringify({ pid: process.pid, sessionId, cwd, procStart, name, status: 'busy', kind: 'interactive' }));
const tool = { ...process.env, CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: sessionId, CLAUDE_PID: String(process.pid) };
const children = [];
const server = net.createServer((c) => {
  c.on('error', (e) => console.error('connection:', e.message));
  let buf = '';
  c.on('data', (d) => {
    buf += d;
    if (!buf.endsWith('\\n')) return;
    const req = JSON.parse(buf);
    if (req.op === 'run' || req.op === 'sh') {
      const env = { ...tool, ...(req.env ?? {}), ATTEND_BIN: bin, NODE_BIN: process.execPath };
      for (const k of req.unset ?? []) delete env[k];
      const r = req.op === 'run'
        ? spawnSync(process.execPath, [bin, ...req.args], { cwd, env, input: req.input ?? '', encoding: 'utf8' })
        : spawnSync('sh', ['-c', req.script], { cwd, env, input: req.input ?? '', encoding: 'utf8' });
      c.end(JSON.stringify({ exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }) + '\\n');
    } else if (req.op === 'spawn') {
      const log = require('node:fs').openSync(req.sock + '.log', 'a');
      const p = spawn(process.execPath, ['-e', script, '--', req.sessionId, req.cwd, req.sock, req.name, bin, script], { stdio: ['ignore', 'ignore', log], env: process.env });
      p.on('error', (e) => console.error('spawn:', e.message));
      p.on('exit', (code, sig) => console.error('child', p.pid, 'exited', code, sig));
      children.push(p);
      c.end(JSON.stringify({ pid: p.pid }) + '\\n');
    }
  });
});
const stop = () => { rmSync(record, { force: true }); for (const p of children) p.kill('SIGTERM'); process.exit(0); };
process.on('exit', (code) => console.error('session', process.pid, 'exits', code));
process.on('SIGTERM', stop);
// Ready once listening: the socket file exists from bind(), a moment before listen().
server.listen(sock, () => writeFileSync(sock + '.ready', ''));
`;

export interface SessionProc {
  name: string;
  sessionId: string;
  pid: number;
  cwd: string;
  /**
   * An attend command, run by this session's process as its Bash tool would; `env` adds to
   * (and `unset` removes from) the variables Claude Code gives its tools, as a tool could.
   */
  run(args: string[], input?: string, opts?: { env?: Record<string, string>; unset?: string[] }): Promise<RunResult>;
  /** A shell script its Bash tool runs (`sh -c`), with $ATTEND_BIN and $NODE_BIN set. */
  sh(script: string, opts?: { env?: Record<string, string>; unset?: string[] }): Promise<RunResult>;
  /** A worker: a session that this session's process starts, so a real child of it. */
  spawnChild(name: string): Promise<SessionProc>;
}

let counter = 0;

/** One request to a session process; a failure carries what the process said on stderr. */
function ask(sock: string, req: unknown, pid?: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = connect(sock, () => c.write(`${JSON.stringify(req)}\n`));
    c.on('data', (d) => (out += d.toString('utf8')));
    c.on('end', () => resolve(JSON.parse(out) as Record<string, unknown>));
    c.on('error', (err) => {
      let alive = 'unknown';
      try {
        if (pid !== undefined) alive = String(process.kill(pid, 0));
      } catch {
        alive = 'false';
      }
      reject(new Error(`${err.message} (${JSON.stringify(req).slice(0, 80)}; pid ${pid} alive: ${alive}); the session process said: ${existsSync(`${sock}.log`) ? readFileSync(`${sock}.log`, 'utf8') : '(nothing)'}`));
    });
  });
}

/** Session processes on `bus`; `stop()` ends every one of them (by its pid) and their records. */
export function sessionTree(bus: TempBus): { lead(name: string): Promise<SessionProc>; stop(): void } {
  const pids: number[] = [];
  const place = (name: string) => {
    const n = ++counter;
    return {
      sessionId: `5e55${String(n).padStart(4, '0')}-0000-4000-8000-${String(process.pid).padStart(12, '0')}`,
      cwd: join(bus.dir, 'work', `${name}-${n}`),
      sock: join(bus.dir, `s${n}.sock`),
    };
  };
  const proc = async (name: string, at: ReturnType<typeof place>, pid: number): Promise<SessionProc> => {
    pids.push(pid);
    await waitFor(() => existsSync(`${at.sock}.ready`) && existsSync(join(bus.claudeDir, 'sessions', `${pid}.json`)), { what: `session ${name} to listen`, timeoutMs: 15_000 });
    const s: SessionProc = {
      name,
      sessionId: at.sessionId,
      pid,
      cwd: at.cwd,
      run: async (args, input, o = {}) => (await ask(at.sock, { op: 'run', args, input, ...o }, pid)) as unknown as RunResult,
      sh: async (script, o = {}) => (await ask(at.sock, { op: 'sh', script, ...o }, pid)) as unknown as RunResult,
      async spawnChild(child) {
        const c = place(child);
        const r = await ask(at.sock, { op: 'spawn', sessionId: c.sessionId, cwd: c.cwd, sock: c.sock, name: child }, pid);
        return proc(child, c, r.pid as number);
      },
    };
    return s;
  };
  return {
    async lead(name) {
      const at = place(name);
      const log = openSync(`${at.sock}.log`, 'a');
      const p = spawn(process.execPath, ['-e', HOST, '--', at.sessionId, at.cwd, at.sock, name, BIN, HOST], { stdio: ['ignore', 'ignore', log], env: bus.env });
      closeSync(log);
      return proc(name, at, p.pid as number);
    },
    stop() {
      // Workers first: a lead's SIGTERM ends its own children too, but each is ended by its pid.
      for (const pid of pids.reverse()) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      pids.length = 0;
    },
  };
}

/** The sessions of the two-lead tree: ME ─┬─ lead1 ─┬─ w1, w2; ME ─── lead2 ─── w3. */
export type TwoLeads = Record<'lead1' | 'w1' | 'w2' | 'lead2' | 'w3', SessionProc>;

/**
 * Per test: a fresh bus with the two-lead tree on it (the person starts lead1 and lead2, lead1
 * starts w1 and w2, lead2 starts w3), handed to `onTree`; every process ends after the test,
 * then the bus is removed.
 */
export function useTwoLeadTree(onTree: (bus: TempBus, n: TwoLeads) => void): void {
  let bus: TempBus | undefined;
  let tree: ReturnType<typeof sessionTree> | undefined;
  beforeEach(async () => {
    bus = makeTempBus();
    tree = sessionTree(bus);
    const lead1 = await tree.lead('lead1');
    const lead2 = await tree.lead('lead2');
    const [w1, w2, w3] = await Promise.all([lead1.spawnChild('w1'), lead1.spawnChild('w2'), lead2.spawnChild('w3')]);
    onTree(bus, { lead1, w1, w2, lead2, w3 });
  }, 60_000);
  afterEach(() => {
    tree?.stop();
    bus?.cleanup();
  });
}
