// A send through attend's signer (issue 20 §7; docs/trust.md, "Inside Claude Code's sandbox")
// against a send that signs with its own key: the same session, the same bus, interleaved
// runs, medians of wall time. The signer path is what a command in Claude Code's sandbox
// takes (SANDBOX_RUNTIME=1): its identity and its signature come from `attend signer` over
// HTTP on 127.0.0.1, through a forward proxy in this process, as Claude Code's runs in the
// claude process. This process stands in for the claude process: its session record names it,
// and the signer finds the session as the holder of the proxy's connection, as it does for a
// real sandboxed command.

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Asynchronous: the proxy in this process must answer while a send runs.
function time(bin, env, cwd, text) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [bin, 'send', text], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`attend send exited ${code}: ${err}`))));
  });
}

/** A forward proxy for plain HTTP, like the one Claude Code runs for its sandbox. */
function startProxy() {
  const server = createServer((req, res) => {
    const u = new URL(req.url);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const up = request({ host: u.hostname, port: u.port, method: req.method, path: u.pathname, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export default async function ({ bin, tmp, quick }) {
  const claudeDir = join(tmp, 'claude');
  const cwd = join(tmp, 'work', 'w');
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
  const procStart = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  const sessionId = '00000000-0000-4000-8000-00000000beef';
  writeFileSync(join(claudeDir, 'sessions', `${process.pid}.json`), JSON.stringify({ pid: process.pid, sessionId, cwd, procStart, name: 'w', status: 'idle', kind: 'interactive' }));
  const port = 20_000 + Math.floor(Math.random() * 12_000);
  const base = { PATH: process.env.PATH, HOME: tmp, ATTEND_HOME: join(tmp, 'bus'), CLAUDE_CONFIG_DIR: claudeDir, ATTEND_SIGNER: `127.0.0.1:${port}` };
  const local = { ...base, CLAUDECODE: '1', CLAUDE_PID: String(process.pid), CLAUDE_CODE_SESSION_ID: sessionId };
  const proxy = await startProxy();
  const sandboxed = { ...local, SANDBOX_RUNTIME: '1', HTTP_PROXY: `http://127.0.0.1:${proxy.address().port}` };
  const signer = spawn(process.execPath, [bin, 'signer', '--watch', String(process.pid)], { env: base, cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    // Ready when a send through it works; its key is made there.
    for (let i = 0; ; i++) {
      try {
        await time(bin, sandboxed, cwd, 'warm-up');
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await time(bin, local, cwd, 'warm-up');
    const rounds = quick ? 5 : 30;
    const own = [];
    const through = [];
    for (let i = 0; i < rounds; i++) {
      own.push(await time(bin, local, cwd, `own ${i}`));
      through.push(await time(bin, sandboxed, cwd, `through ${i}`));
    }
    const a = median(own);
    const b = median(through);
    return {
      title: 'A send through the signer (Claude Code sandbox path)',
      markdown: [
        `\`attend send\` as one session, ${rounds} interleaved runs each, median wall time:`,
        '',
        '| path | median |',
        '| --- | --- |',
        `| signs with its own key | ${a.toFixed(1)} ms |`,
        `| identity and signature from \`attend signer\` (SANDBOX_RUNTIME=1) | ${b.toFixed(1)} ms (${(b / a).toFixed(2)}×) |`,
        '',
        'The difference is the worker thread that makes the synchronous requests (started once per',
        "command), two requests (whoami, sign) through a proxy in the session's process, and the",
        "signer finding the peer in /proc. The sandbox's own start (bwrap, its proxy bridges) comes",
        'on top of either path in a real sandbox.',
      ].join('\n'),
    };
  } finally {
    signer.kill('SIGTERM');
    proxy.close();
  }
}
