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
  return startNatsWith((storeDir, port) => (opts.config ? ['-c', opts.config, '-p', port > 0 ? String(port) : '-1'] : ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir]), -1);
}

/** One server, its arguments from its store directory and port (-1 until the first start chose one). */
async function startNatsWith(argsFor: (storeDir: string, port: number) => string[], firstPort: number): Promise<NatsServer> {
  const storeDir = mkdtempSync(join(tmpdir(), 'attend-nats-'));
  let cur = await launch(argsFor(storeDir, firstPort));
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
          cur = await launch(argsFor(storeDir, port));
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

/** A free TCP port on 127.0.0.1 (the kernel's choice, released at once). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface NatsCluster {
  nodes: NatsServer[];
  /** Every node's client URL, comma-separated (what `attend relay --server` takes). */
  urls: string;
  /** The node named `name` (server_name `n1`, `n2`, …, or as the config names it). */
  byName(name: string): NatsServer;
  stop(): Promise<void>;
}

/**
 * `n` nats-servers in one cluster with JetStream, on free ports of 127.0.0.1, each with a
 * store of its own, routes to all. `configs` (one per node, as `attend relay hub-config
 * --cluster` writes them, server names attend-1, …) are started with their ports overridden
 * by flags, and their route user.
 */
export async function startCluster(n: number, opts: { configs?: string[] } = {}): Promise<NatsCluster> {
  const ports: { client: number; route: number }[] = [];
  for (let i = 0; i < n; i++) ports.push({ client: await freePort(), route: await freePort() });
  // Route credentials as the configs name them (hub-config writes one route user).
  const { readFileSync } = await import('node:fs');
  const userinfo = opts.configs ? (/nats-route:\/\/([^@/"]+)@/.exec(readFileSync(opts.configs[0]!, 'utf8'))?.[1] ?? '') : '';
  const routes = ports.map((p) => `nats://${userinfo ? `${userinfo}@` : ''}127.0.0.1:${p.route}`).join(',');
  const names = ports.map((_, i) => (opts.configs ? `attend-${i + 1}` : `n${i + 1}`));
  const servers = await Promise.all(
    ports.map((p, i) => {
      const common = ['-a', '127.0.0.1', '-p', String(p.client), '--cluster', `nats://127.0.0.1:${p.route}`, '--routes', routes];
      const cfg = opts.configs?.[i];
      return startNatsWith((storeDir) => (cfg ? ['-c', cfg, ...common] : ['-js', '-n', names[i]!, '--cluster_name', 'attend-test', '-sd', storeDir, ...common]), p.client);
    }),
  );
  // A cluster answers JetStream calls once it has elected its metadata leader (its log says so).
  const deadline = Date.now() + 30_000;
  while (!servers.some((s) => /metadata leader/i.test(s.log()))) {
    if (Date.now() > deadline) throw new Error(`the cluster elected no metadata leader:\n${servers.map((s) => s.log()).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    nodes: servers,
    urls: servers.map((s) => s.url).join(','),
    byName(name) {
      const i = names.indexOf(name);
      if (i < 0) throw new Error(`no node ${name}`);
      return servers[i]!;
    },
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}
