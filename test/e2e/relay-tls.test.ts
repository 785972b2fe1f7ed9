// TLS proven (issue 25 item 4): a hub with a private CA made here by openssl, its config from
// `attend relay hub-config --tls-cert/--tls-key`. A relay that trusts the CA connects and
// traffic crosses; one given another CA is refused and says so, in its log and in `relay
// status`, within seconds. And SIGTERM stops a relay promptly in every state (connecting,
// reconnecting, draining a backlog), losing nothing: what it had not published goes at its
// next start, once.

import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { type NatsCluster, type NatsServer, startCluster, startNats } from '../helpers/nats.js';
import { connect as tlsConnect } from 'node:tls';
import { type Machine, burst, expectAllAt, makeMachine } from '../helpers/relay.js';
import { runBin, waitFor } from '../helpers/bus.js';
import { writeHubConfig } from '../../tools/relay/hub-config.js';

let nats: NatsServer | undefined;
let cluster: NatsCluster | undefined;
const machines: Machine[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const m of machines.splice(0)) {
    await m.stopRelay();
    m.bus.cleanup();
  }
  await nats?.stop();
  nats = undefined;
  await cluster?.stop();
  cluster = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A CA, a server certificate it signs for 127.0.0.1, and another CA that signed nothing here. */
function makePki(dir: string): { ca: string; otherCa: string; cert: string; key: string } {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=attend test CA');
  ssl('req', '-x509', ...ec, '-keyout', 'other.key', '-out', 'other.pem', '-days', '1', '-subj', '/CN=some other CA');
  ssl('req', ...ec, '-keyout', 'hub.key', '-out', 'hub.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  ssl('x509', '-req', '-in', 'hub.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'hub.pem', '-days', '1', '-extfile', 'san.cnf');
  return { ca: join(dir, 'ca.pem'), otherCa: join(dir, 'other.pem'), cert: join(dir, 'hub.pem'), key: join(dir, 'hub.key') };
}

function exitOf(p: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve({ code: p.exitCode, signal: p.signalCode });
  return new Promise((r) => p.once('exit', (code, signal) => r({ code, signal })));
}

/** SIGTERM the machine's relay: how long it took to exit, and how. */
async function term(m: Machine): Promise<{ ms: number; code: number | null }> {
  const p = m.relay!;
  const t0 = Date.now();
  p.kill('SIGTERM');
  const { code } = await exitOf(p);
  m.relay = null;
  return { ms: Date.now() - t0, code };
}

type StatusJson = { connected: boolean; lastError: string | null; waiting: { out: { count: number | null; reason: string | null } } };
const statusOf = (m: Machine) => JSON.parse(runBin(['relay', 'status', '--json'], { env: m.bus.env }).stdout) as StatusJson;

describe('attend relay over TLS with a private CA', { timeout: 60_000 }, () => {
  it('hub-config writes the TLS part; a relay that trusts the CA connects; another CA is refused loudly within seconds, and SIGTERM stops it while refused; with the right CA its message goes once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attend-tls-'));
    dirs.push(dir);
    const pki = makePki(dir);
    const hub = writeHubConfig({ hosts: ['alpha', 'bravo', 'mallory'], out: join(dir, 'hub'), listen: '127.0.0.1:4222', tlsCert: pki.cert, tlsKey: pki.key });
    expect(readFileSync(hub.config, 'utf8')).toContain(`tls { cert_file: ${JSON.stringify(pki.cert)}, key_file: ${JSON.stringify(pki.key)} }`);
    expect(hub.servers).toMatch(/^tls:\/\//);
    nats = await startNats({ config: hub.config });
    const url = () => `tls://127.0.0.1:${nats!.port}`;
    const [a, b, c] = (['alpha', 'bravo', 'mallory'] as const).map((h) => makeMachine(h, url, { creds: hub.creds[h]! }));
    machines.push(a!, b!, c!);
    await Promise.all([a!.startRelay(['--tls-ca', pki.ca]), b!.startRelay(['--tls-ca', pki.ca])]);
    const sent = runBin(['send', 'over tls'], { env: a!.bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    await waitFor(() => b!.ids('_broadcast').includes(sent.stdout.trim()), { timeoutMs: 15_000, what: 'the broadcast at bravo over TLS' });

    // The wrong CA: refused, and said so in the log and in status, within seconds.
    const t0 = Date.now();
    c!.spawnRelay(['--tls-ca', pki.otherCa]);
    await waitFor(() => /TLS refused: the hub's certificate is not trusted .*not signed by the CA in .*other\.pem/.test(c!.relayLog()), { timeoutMs: 10_000, what: `mallory's log naming the refusal: ${c!.relayLog()}` });
    await waitFor(() => /TLS refused/.test(statusOf(c!).lastError ?? ''), { timeoutMs: 10_000, what: `mallory's status naming the refusal: ${JSON.stringify(statusOf(c!))}` });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const text = runBin(['relay', 'status'], { env: c!.bus.env }).stdout;
    expect(text).toMatch(/^connected: +no/m);
    expect(text).toMatch(/^last error: TLS refused: the hub's certificate is not trusted/m);
    // A message written meanwhile is reported as waiting, with why (a relay counts from its first start).
    const stuck = runBin(['send', 'from mallory'], { env: c!.bus.env }).stdout.trim();
    await waitFor(() => statusOf(c!).waiting.out.count === 1, { timeoutMs: 10_000, what: 'mallory counting its waiting message' });
    expect(statusOf(c!).waiting.out.reason).toMatch(/^not connected to the hub \(TLS refused/);
    // attend status and attend doctor say it too.
    expect(runBin(['status'], { env: c!.bus.env }).stdout).toMatch(/relay: +not connected .*waiting out 1, oldest \d+s: not connected to the hub \(TLS refused/);
    const relayCheck = (JSON.parse(runBin(['doctor', '--json'], { env: c!.bus.env }).stdout) as { checks: { name: string; status: string; detail: string }[] }).checks.find((k) => k.name === 'relay');
    expect(relayCheck).toMatchObject({ status: 'warn' });
    expect(relayCheck!.detail).toMatch(/cannot reach the hub \(TLS refused: the hub's certificate is not trusted/);
    // The log says it once, not at every retry.
    expect(c!.relayLog().match(/TLS refused/g)!.length).toBe(1);

    // SIGTERM while refused (still connecting): it stops promptly, cleanly.
    const stop = await term(c!);
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(3_000);
    expect(b!.ids('_broadcast')).not.toContain(stuck);

    // Given the right CA, what waited goes, once.
    await c!.startRelay(['--tls-ca', pki.ca]);
    await waitFor(() => b!.ids('_broadcast').includes(stuck), { timeoutMs: 15_000, what: "mallory's message at bravo" });
    expect(statusOf(c!).lastError).toBeNull();
    expect(b!.ids('_broadcast').filter((id) => id === stuck)).toHaveLength(1);
    console.log(`tls: SIGTERM while refused exited in ${stop.ms} ms`);
  });
});

/**
 * A TLS handshake with a node's route port, trusting the test CA, with or without the node
 * certificate as a client certificate: the INFO line the node sends once it accepts, or the
 * error it ends with.
 */
function routeHello(port: number, pki: { ca: string; cert: string; key: string }, withCert: boolean): Promise<{ info?: Record<string, unknown>; error?: string }> {
  return new Promise((resolve) => {
    const sock = tlsConnect({ port, host: '127.0.0.1', ca: readFileSync(pki.ca), ...(withCert ? { cert: readFileSync(pki.cert), key: readFileSync(pki.key) } : {}) });
    let buf = '';
    const done = (r: { info?: Record<string, unknown>; error?: string }) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ error: `no answer in 5 s: ${JSON.stringify(buf)}` }), 5_000);
    sock.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      const line = /^INFO (\{.*\}) *\r?\n/.exec(buf);
      if (line) done({ info: JSON.parse(line[1]!) as Record<string, unknown> });
    });
    sock.on('error', (e) => done({ error: e.message }));
    sock.on('close', () => done({ error: `closed: ${JSON.stringify(buf)}` }));
  });
}

describe('a cluster over TLS', { timeout: 120_000 }, () => {
  it('hub-config --cluster --tls-ca makes the routes TLS, verified both ways; relays on different nodes reach each other through them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attend-tls-cluster-'));
    dirs.push(dir);
    const pki = makePki(dir);
    // Without the CA the configs are refused: the routes would have nothing to verify by.
    const noCa = runBin(['relay', 'hub-config', '--hosts', 'alpha', '--out', join(dir, 'x'), '--cluster', '--tls-cert', pki.cert, '--tls-key', pki.key], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir } });
    expect(noCa.exitCode).toBe(2);
    expect(noCa.stderr).toMatch(/needs --tls-ca/);
    const hub = writeHubConfig({ hosts: ['alpha', 'bravo'], out: join(dir, 'hub'), listen: '127.0.0.1:4222', tlsCert: pki.cert, tlsKey: pki.key, tlsCa: pki.ca, cluster: { nodes: 3 } });
    const conf = readFileSync(hub.configs[1]!, 'utf8');
    const clusterBlock = /cluster \{[\s\S]*?\n\}/.exec(conf)?.[0] ?? '';
    expect(clusterBlock).toContain(`ca_file: ${JSON.stringify(pki.ca)}, verify: true`);
    expect(hub.servers.split(',').every((u) => u.startsWith('tls://'))).toBe(true);
    cluster = await startCluster(3, { configs: hub.configs });
    // Every node's route port speaks TLS only, and refuses a peer without a certificate the CA signed.
    for (const node of cluster.nodes) {
      const routePort = Number(/Listening for route connections on [^\s]*:(\d+)/.exec(node.log())?.[1]);
      const withCert = await routeHello(routePort, pki, true);
      expect(withCert.info, withCert.error).toMatchObject({ tls_required: true, tls_verify: true });
      const without = await routeHello(routePort, pki, false);
      expect(without.info).toBeUndefined();
      expect(without.error).toMatch(/certificate/i);
    }
    // alpha on node 1 only, bravo on node 3 only: what crosses went over the TLS routes.
    const a = makeMachine('alpha', () => `tls://127.0.0.1:${cluster!.nodes[0]!.port}`, { creds: hub.creds.alpha! });
    const b = makeMachine('bravo', () => `tls://127.0.0.1:${cluster!.nodes[2]!.port}`, { creds: hub.creds.bravo! });
    machines.push(a, b);
    await Promise.all([a.startRelay(['--tls-ca', pki.ca]), b.startRelay(['--tls-ca', pki.ca])]);
    const sent = runBin(['send', 'across the tls routes'], { env: a.bus.env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    await waitFor(() => b.ids('_broadcast').includes(sent.stdout.trim()), { timeoutMs: 30_000, what: 'the broadcast at bravo through the cluster' });
  });
});

describe('SIGTERM stops a relay promptly in every state, losing nothing', { timeout: 60_000 }, () => {
  it('connecting (no hub yet), reconnecting (the hub killed), draining a backlog: each exits within seconds with 0; every message arrives once after', async () => {
    nats = await startNats();
    const a = makeMachine('alpha', () => nats!.url);
    const b = makeMachine('bravo', () => nats!.url);
    machines.push(a, b);
    await Promise.all([a.startRelay(), b.startRelay()]);
    const times: Record<string, number> = {};

    // Draining a backlog: SIGTERM once part of a burst of 3,000 is published.
    const big = await burst(a, 3_000);
    await waitFor(() => ((a.status()?.published as number) ?? 0) > 0, { timeoutMs: 20_000, what: 'alpha publishing' });
    const draining = await term(a);
    expect(draining.code).toBe(0);
    times.draining = draining.ms;

    // Reconnecting: the hub killed under a running relay that holds new messages.
    await a.startRelay();
    await nats.kill();
    await waitFor(() => a.status()?.connected === false, { timeoutMs: 15_000, what: 'alpha noticing the hub gone' });
    const during = await burst(a, 20);
    const reconnecting = await term(a);
    expect(reconnecting.code).toBe(0);
    times.reconnecting = reconnecting.ms;

    // Connecting: started while the hub is still away, stopped before it ever connects.
    a.spawnRelay();
    await waitFor(() => /cannot connect to the hub/.test(a.relayLog()), { timeoutMs: 10_000, what: 'alpha trying to connect' });
    const connecting = await term(a);
    expect(connecting.code).toBe(0);
    times.connecting = connecting.ms;

    for (const [state, ms] of Object.entries(times)) expect(ms, `SIGTERM while ${state}`).toBeLessThan(5_000);

    // Nothing lost: the hub back, alpha started again, bravo has every message once.
    await nats.restart();
    await a.startRelay();
    await expectAllAt(b, [...big, ...during], 'bravo after the stops', [a, b]);
    console.log(`SIGTERM exit times: ${JSON.stringify(times)}`);
  });
});
