// A real nats-server for tests (spec §8): JetStream on 127.0.0.1, a free port, a temporary
// store directory, stopped by pid. The port is read from the server's own log line.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NatsServer {
  url: string;
  port: number;
  pid: number;
  storeDir: string;
  proc: ChildProcess;
  log(): string;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Start again on the same port and store (after kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function exited(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((r) => proc.once('exit', () => r()));
}

async function launch(args: string[], timeoutMs = 10_000): Promise<{ proc: ChildProcess; port: number; log: () => string }> {
  const proc = spawn('nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const onData = (b: Buffer) => {
    out += b.toString('utf8');
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${out}`)), timeoutMs);
    const check = () => {
      const m = /Listening for client connections on [^\s]*:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    proc.stdout!.on('data', check);
    proc.stderr!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited (${code}):\n${out}`));
    });
  });
  return { proc, port, log: () => out };
}

/** `nats-server -js -a 127.0.0.1 -p -1 -sd <tmp>`, or `-c <config>` when given. */
export async function startNats(opts: { config?: string } = {}): Promise<NatsServer> {
  const storeDir = mkdtempSync(join(tmpdir(), 'attend-nats-'));
  const argsFor = (port: number) => (opts.config ? ['-c', opts.config, ...(port > 0 ? ['-p', String(port)] : ['-p', '-1'])] : ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir]);
  let cur = await launch(argsFor(-1));
  const port = cur.port;
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    port,
    get pid() {
      return cur.proc.pid as number;
    },
    storeDir,
    get proc() {
      return cur.proc;
    },
    log: () => cur.log(),
    async kill() {
      cur.proc.kill('SIGKILL');
      await exited(cur.proc);
    },
    async restart() {
      // The port was ours a moment ago; retry briefly while the kernel lets it go.
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          cur = await launch(argsFor(port));
          return;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    async stop() {
      cur.proc.kill('SIGTERM');
      await exited(cur.proc);
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
  return server;
}
