// CLI wiring for `attend relay` (issue 13): the bridge to a NATS JetStream hub. Everything
// NATS loads lazily from tools/relay, so no other verb pays for it.

import type { Command } from 'commander';
import { usageError } from '../wire/errors.js';
import { listLive, presenceDir } from '../bus/presence/index.js';
import { processAlive } from '../identity/system.js';
import { type Registrar, examples } from './registrar.js';
import type { Io } from './io.js';
import type { Ctx } from './context.js';

interface Flags {
  server?: string;
  host?: string;
  creds?: string;
  tlsCa?: string;
  insecure?: boolean;
}

const hubOptions = (cmd: Command) =>
  cmd
    .option('--server <url>', 'the hub: nats://host:4222 or tls://host:4222 (comma-separated for a cluster)')
    .option('--host <name>', "this machine's name on the hub, [a-z0-9-]{1,32} (default: the hostname, sanitised)")
    .option('--creds <file>', 'credentials: an nkey seed file from hub-config, or a NATS user JWT creds file')
    .option('--tls-ca <file>', 'CA certificate to verify a TLS hub')
    .option('--insecure', 'allow a hub off this machine without TLS (a private network or VPN)');

export const registerRelay: Registrar = (program: Command, ctx: Ctx, io: Io) => {
  const relay = hubOptions(
    program
      .command('relay')
      .description('bridge this machine\'s bus to other machines through a NATS JetStream hub (runs until stopped)')
      .option('--presence-ttl <seconds>', 'how long this machine stays in others\' peers without a refresh', '30'),
  )
    .addHelpText(
      'after',
      examples([
        'attend relay hub-config --hosts laptop,box --out ~/attend-hub   # once, on the hub',
        'nats-server -c ~/attend-hub/hub.conf',
        'attend relay --server nats://127.0.0.1:4222 --host laptop --creds laptop.creds',
        'attend relay config --server tls://hub.lan:4222 --host box --creds box.creds --tls-ca ca.pem',
        'attend relay status --json',
      ]) + '\nSee docs/cross-machine.md.\n',
    )
    .action(async (opts: Flags & { presenceTtl: string }) => {
      if (!/^\d+$/.test(opts.presenceTtl) || Number(opts.presenceTtl) < 2) throw usageError('--presence-ttl takes whole seconds, at least 2');
      const { relayRun } = await import('../relay/main.js');
      await relayRun({
        root: ctx.root(),
        keysDir: ctx.paths.keysDir,
        flags: opts,
        now: ctx.now,
        log: (line) => io.err(line),
        live: () => listLive({ root: ctx.paths.root, sessionsDir: ctx.paths.sessionsDir, now: ctx.now(), procInfo: ctx.procInfo }),
        rosterDirs: [ctx.paths.sessionsDir, presenceDir(ctx.paths.root)],
        presenceTtlS: Number(opts.presenceTtl),
        // The composition root reads the environment (ctx.env); the relay takes it as an option.
        trace: ctx.env.ATTEND_RELAY_TRACE === '1',
      });
      // Stopped cleanly (cursor and status written, connection drained): a watcher the
      // client library may still hold must not keep a stopped relay alive.
      setTimeout(() => process.exit(0), 500).unref();
    });

  // The program parses options positionally, so each subcommand takes the hub options itself
  // (`attend relay config --server ...`); ones given before the subcommand count too.
  const hubFlags = (opts: Flags): Flags => ({ ...relay.opts<Flags>(), ...opts });
  hubOptions(relay.command('config').description('write the relay settings to the bus root (checked, not connected)'))
    .option('--json', 'print JSON')
    .action(async (opts: Flags & { json?: boolean }) => {
      const { relayConfig } = await import('../relay/main.js');
      const r = relayConfig(ctx.root(), hubFlags(opts));
      if (opts.json) return io.json(r);
      io.out(`wrote ${r.file}`);
    });

  relay
    .command('status')
    .description('is the relay running and connected; backlog both ways; parked messages')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { relayStatus, formatStatus } = await import('../relay/main.js');
      const v = relayStatus(ctx.paths.root, ctx.now(), (pid) => processAlive(pid, undefined, ctx.procInfo));
      if (opts.json) return io.json(v);
      io.out(formatStatus(v, ctx.now()));
    });

  hubOptions(relay.command('resync').description('publish this machine\'s messages since a time again (repairs a hub that lost data)'))
    .requiredOption('--since <time>', 'an ISO time, epoch ms, or a duration back from now (90m, 2h, 3d)')
    .option('--json', 'print JSON')
    .action(async (opts: Flags & { since: string; json?: boolean }) => {
      const { relayResync, parseSince } = await import('../relay/main.js');
      const r = await relayResync({ root: ctx.root(), keysDir: ctx.paths.keysDir, flags: hubFlags(opts), since: parseSince(opts.since, ctx.now()), now: ctx.now });
      if (opts.json) return io.json(r);
      io.out(`published ${r.published}, already on the hub ${r.duplicates}, failed ${r.failed}`);
      if (r.failed > 0) io.setExitCode(3);
    });

  relay
    .command('hub-config')
    .description('write a nats-server config for the hub: JetStream, one nkey user per host, one creds file per host')
    .requiredOption('--hosts <list>', 'the machines, comma-separated (laptop,box,ci)')
    .requiredOption('--out <dir>', 'where to write hub.conf and <host>.creds')
    .option('--listen <addr>', 'the hub\'s client address', '0.0.0.0:4222')
    .option('--tls-cert <file>', 'server certificate (with --tls-key)')
    .option('--tls-key <file>', 'server key')
    .option('--tls-ca <file>', 'with --cluster: the CA that signed the nodes\' certificates; routes are TLS, verified both ways')
    .option('--cluster', 'a cluster with JetStream: one config per node (attend-1.conf, ...), routes between them')
    .option('--nodes <n>', 'nodes in the cluster (3 to 9)', '3')
    .option('--node-hosts <list>', 'each node\'s address, comma-separated (default: all on this machine, consecutive ports)')
    .option('--route-port <port>', 'the cluster route port (consecutive when the nodes share a machine)', '6222')
    .option('--json', 'print JSON')
    .action(async (opts: { hosts: string; out: string; listen: string; tlsCert?: string; tlsKey?: string; tlsCa?: string; cluster?: boolean; nodes: string; nodeHosts?: string; routePort: string; json?: boolean }) => {
      const { writeHubConfig } = await import('../relay/hub-config.js');
      for (const [flag, v] of [['--nodes', opts.nodes], ['--route-port', opts.routePort]] as const) if (!/^\d{1,5}$/.test(v)) throw usageError(`${flag} takes a number`);
      const cluster = opts.cluster ? { nodes: Number(opts.nodes), routePort: Number(opts.routePort), ...(opts.nodeHosts ? { nodeHosts: opts.nodeHosts.split(',') } : {}) } : undefined;
      const r = writeHubConfig({ hosts: opts.hosts.split(','), out: opts.out, listen: opts.listen, ...(opts.tlsCert ? { tlsCert: opts.tlsCert } : {}), ...(opts.tlsKey ? { tlsKey: opts.tlsKey } : {}), ...(opts.tlsCa ? { tlsCa: opts.tlsCa } : {}), ...(cluster ? { cluster } : {}) });
      if (opts.json) return io.json(r);
      io.out(
        [
          ...r.configs.map((c) => `wrote ${c}`),
          ...Object.entries(r.creds).map(([h, f]) => `  ${h}: ${f}`),
          ...r.configs.map((c) => `start ${r.configs.length > 1 ? 'a node' : 'the hub'}: nats-server -c ${c}`),
          `each relay: attend relay --server ${r.servers} --host <host> --creds <host>.creds${r.servers.startsWith('tls:') ? ' --tls-ca <the CA that signed the certificate>' : ''}`,
        ].join('\n'),
      );
    });
};
