// `attend relay hub-config --hosts a,b,c --out DIR`: a whole hub in one nats-server config, or
// with `--cluster [--nodes N]` a cluster of N nodes with JetStream, one config each.
// One nkey user per host (the server stores only public keys); each may publish only under
// its own origin (`attend.v1.<host>.>`), its own presence key and its own keys in the shared
// state bucket (channels, public keys), plus the JetStream API
// calls its relay makes on the stream, its own durable consumers and the presence bucket.
// The publish allow-list is the real write permission: a user without JetStream API rights
// could still core-publish into a captured subject (spec §8).

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { usageError } from '../wire/errors.js';
import { HOST_CLASS } from './config.js';
import { PRESENCE_BUCKET } from './presence.js';
import { STATE_BUCKET } from './state.js';
import { STREAM_NAME, SUBJECT_PREFIX, consumerFilters, durableName } from './subjects.js';

interface HubConfigInput {
  hosts: string[];
  out: string;
  listen: string;
  tlsCert?: string;
  tlsKey?: string;
  /** The CA that signed the nodes' certificates: a cluster's routes are TLS, verified both ways by it. */
  tlsCa?: string;
  /** A cluster of this many nodes (3 when only `cluster` is said): one config each. */
  cluster?: { nodes: number; nodeHosts?: string[]; routePort?: number };
}

interface HubConfigResult {
  /** The config to start (the first node's, for a cluster). */
  config: string;
  /** Every node's config: one for a single hub. */
  configs: string[];
  creds: Record<string, string>;
  store: string;
  /** What every relay's `--server` takes: each node's client address. */
  servers: string;
}

/** nats-server's listen address: `host:port`, or a bare port on every interface. */
function splitListen(listen: string): { host: string; port: number } {
  const m = /^(?:(.*):)?(\d{1,5})$/.exec(listen.trim());
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw usageError(`--listen '${listen.slice(0, 60)}' is not host:port`);
  return { host: m[1] || '0.0.0.0', port: Number(m[2]) };
}

/** Where relays and routes reach a node listening on `host` (every interface: this machine). */
const reachable = (host: string) => (host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host);

/** What one host's relay may publish: its own subjects and the JetStream calls it needs. */
export function publishAllow(host: string): string[] {
  const durables = consumerFilters(host).map(({ suffix }) => durableName(host, suffix));
  // The two buckets: presence (one key per host) and shared state (keys under the host).
  const bucket = (name: string) => {
    const kvStream = `KV_${name}`;
    return [
      `$JS.API.STREAM.INFO.${kvStream}`,
      `$JS.API.STREAM.CREATE.${kvStream}`,
      `$JS.API.STREAM.MSG.GET.${kvStream}`,
      `$JS.API.DIRECT.GET.${kvStream}.>`,
      `$JS.API.CONSUMER.CREATE.${kvStream}`,
      `$JS.API.CONSUMER.CREATE.${kvStream}.>`,
      `$JS.API.CONSUMER.DELETE.${kvStream}.>`,
      `$JS.API.CONSUMER.INFO.${kvStream}.>`,
      `$JS.FC.${kvStream}.>`,
    ];
  };
  return [
    `${SUBJECT_PREFIX}.${host}.>`,
    `$KV.${PRESENCE_BUCKET}.${host}`,
    `$KV.${STATE_BUCKET}.${host}.>`,
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${STREAM_NAME}`,
    `$JS.API.STREAM.CREATE.${STREAM_NAME}`,
    ...bucket(PRESENCE_BUCKET),
    ...bucket(STATE_BUCKET),
    ...durables.flatMap((d) => [
      `$JS.API.CONSUMER.INFO.${STREAM_NAME}.${d}`,
      `$JS.API.CONSUMER.CREATE.${STREAM_NAME}.${d}`,
      `$JS.API.CONSUMER.CREATE.${STREAM_NAME}.${d}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${STREAM_NAME}.${d}`,
      `$JS.API.CONSUMER.MSG.NEXT.${STREAM_NAME}.${d}`,
      `$JS.ACK.${STREAM_NAME}.${d}.>`,
    ]),
  ];
}

const q = (s: string) => JSON.stringify(s);

export function writeHubConfig(input: HubConfigInput): HubConfigResult {
  const hosts = [...new Set(input.hosts.map((h) => h.trim()).filter((h) => h.length > 0))];
  if (hosts.length === 0) throw usageError('--hosts needs at least one host name (a,b,c)');
  for (const h of hosts) if (!HOST_CLASS.test(h)) throw usageError(`host '${h}' must match [a-z0-9-]{1,32}`);
  if ((input.tlsCert === undefined) !== (input.tlsKey === undefined)) throw usageError('--tls-cert and --tls-key go together');
  if (input.tlsCa !== undefined && !(input.cluster && input.tlsCert)) throw usageError('--tls-ca goes with --cluster and --tls-cert: the nodes verify each other\'s routes by it (a relay takes its own --tls-ca)');
  if (input.cluster && input.tlsCert && input.tlsCa === undefined) throw usageError('a cluster with TLS needs --tls-ca: its routes are TLS too, and the nodes verify each other by that CA');
  const out = resolve(input.out);
  const config = join(out, 'hub.conf');
  const first = input.cluster ? join(out, 'attend-1.conf') : config;
  if (existsSync(first)) throw usageError(`${first} exists; choose another --out (its keys would be replaced)`);
  mkdirSync(out, { recursive: true, mode: 0o700 });
  const store = join(out, 'jetstream');
  const creds: Record<string, string> = {};
  const users: string[] = [];
  for (const host of hosts) {
    const kp = createUser();
    const file = join(out, `${host}.creds`);
    writeFileSync(
      file,
      `# attend relay credentials for host ${host}: an nkey seed. Keep it secret (mode 0600).\n# attend relay --host ${host} --creds ${file} --server nats://HUB:4222\n${new TextDecoder().decode(kp.getSeed())}\n`,
      { mode: 0o600 },
    );
    chmodSync(file, 0o600);
    creds[host] = file;
    users.push(
      [
        `    { # ${host}`,
        `      nkey: ${kp.getPublicKey()}`,
        '      permissions: {',
        `        publish: { allow: [${publishAllow(host).map(q).join(', ')}] }`,
        `        subscribe: { allow: [${q(`_INBOX_${host}.>`)}] }`,
        '      }',
        '    }',
      ].join('\n'),
    );
  }
  const head = (conf: string, store: string, listen: string) => [
    '# nats-server config for an attend hub, written by `attend relay hub-config`.',
    `# Start it with: nats-server -c ${conf}`,
    `listen: ${q(listen)}`,
    `jetstream { store_dir: ${q(store)} }`,
    ...(input.tlsCert ? [`tls { cert_file: ${q(resolve(input.tlsCert))}, key_file: ${q(resolve(input.tlsKey!))} }`] : []),
  ];
  const auth = ['authorization {', '  users: [', users.join('\n'), '  ]', '}', ''];
  if (!input.cluster) {
    writeFileSync(config, [...head(config, store, input.listen), ...auth].join('\n'), { mode: 0o600 });
    const { host, port } = splitListen(input.listen);
    return { config, configs: [config], creds, store, servers: `${input.tlsCert ? 'tls' : 'nats'}://${reachable(host)}:${port}` };
  }
  // Routes carry every message between the nodes: TLS with the clients' certificate, each
  // node verifying the other's by the CA (verify: true), so no node joins without one.
  const routeTls = input.tlsCert
    ? [`  tls { cert_file: ${q(resolve(input.tlsCert))}, key_file: ${q(resolve(input.tlsKey!))}, ca_file: ${q(resolve(input.tlsCa!))}, verify: true, timeout: 2 }`]
    : [];
  return { ...writeClusterConfigs(out, input.cluster, input.listen, head, auth, input.tlsCert ? 'tls' : 'nats', routeTls), creds };
}

/**
 * One config per node of a cluster: a server name each, a store each, the routes to all, and
 * one route user (a random password, in every node's config) so that only these nodes join.
 * Nodes on one machine (no `nodeHosts`) take consecutive ports from `--listen` and from the
 * route port; nodes on machines of their own all use the same ports.
 */
function writeClusterConfigs(
  out: string,
  c: NonNullable<HubConfigInput['cluster']>,
  listen: string,
  head: (conf: string, store: string, listen: string) => string[],
  auth: string[],
  scheme: 'nats' | 'tls',
  routeTls: string[],
): Omit<HubConfigResult, 'creds'> {
  const { host, port } = splitListen(listen);
  if (!Number.isInteger(c.nodes) || c.nodes < 3 || c.nodes > 9) throw usageError('--nodes takes 3 to 9 (a cluster keeps a quorum only with three or more)');
  const nodeHosts = c.nodeHosts?.map((h) => h.trim()).filter((h) => h !== '');
  if (nodeHosts && nodeHosts.length !== c.nodes) throw usageError(`--node-hosts names ${nodeHosts.length} hosts for ${c.nodes} nodes`);
  for (const h of nodeHosts ?? []) if (!/^[A-Za-z0-9.:-]{1,253}$/.test(h)) throw usageError(`--node-hosts: '${h.slice(0, 60)}' is not a host name or address`);
  const routePort = c.routePort ?? 6222;
  const nodes = Array.from({ length: c.nodes }, (_, i) => ({
    name: `attend-${i + 1}`,
    at: nodeHosts?.[i] ?? reachable(host),
    client: nodeHosts ? port : port + i,
    route: nodeHosts ? routePort : routePort + i,
  }));
  for (const n of nodes) if (n.client > 65535 || n.route > 65535) throw usageError('--listen and the route port leave no room for that many nodes');
  const password = randomBytes(18).toString('base64url');
  const routes = nodes.map((n) => q(`nats-route://route:${password}@${n.at}:${n.route}`)).join(', ');
  const configs: string[] = [];
  for (const n of nodes) {
    const conf = join(out, `${n.name}.conf`);
    const text = [
      ...head(conf, join(out, `jetstream-${n.name}`), `${host}:${n.client}`),
      `server_name: ${q(n.name)}`,
      'cluster {',
      '  name: "attend"',
      `  listen: ${q(`${host}:${n.route}`)}`,
      `  authorization { user: "route", password: ${q(password)} }`,
      `  routes: [${routes}]`,
      ...routeTls,
      '}',
      ...auth,
    ].join('\n');
    writeFileSync(conf, text, { mode: 0o600 });
    configs.push(conf);
  }
  return { config: configs[0]!, configs, store: join(out, 'jetstream-attend-*'), servers: nodes.map((n) => `${scheme}://${n.at}:${n.client}`).join(',') };
}
