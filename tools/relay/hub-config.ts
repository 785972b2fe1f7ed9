// `attend relay hub-config --hosts a,b,c --out DIR`: a whole hub in one nats-server config.
// One nkey user per host (the server stores only public keys); each may publish only under
// its own origin (`attend.v1.<host>.>`), its own presence key and its own keys in the shared
// state bucket (channels, public keys), plus the JetStream API
// calls its relay makes on the stream, its own durable consumers and the presence bucket.
// The publish allow-list is the real write permission: a user without JetStream API rights
// could still core-publish into a captured subject (spec §8).

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
}

interface HubConfigResult {
  config: string;
  creds: Record<string, string>;
  store: string;
}

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
  const out = resolve(input.out);
  const config = join(out, 'hub.conf');
  if (existsSync(config)) throw usageError(`${config} exists; choose another --out (its keys would be replaced)`);
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
  const text = [
    '# nats-server config for an attend hub, written by `attend relay hub-config`.',
    `# Start it with: nats-server -c ${config}`,
    `listen: ${q(input.listen)}`,
    `jetstream { store_dir: ${q(store)} }`,
    ...(input.tlsCert ? [`tls { cert_file: ${q(resolve(input.tlsCert))}, key_file: ${q(resolve(input.tlsKey!))} }`] : []),
    'authorization {',
    '  users: [',
    users.join('\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
  writeFileSync(config, text, { mode: 0o600 });
  return { config, creds, store };
}
