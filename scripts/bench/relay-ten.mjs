// Ten machines on this one (issue 13): ten bus roots, each with a session whose sensor
// (`attend run`) is watching and an `attend relay`, all on one `nats-server`. Broadcasts
// written one at a time on the first machine are timed until the header line appears on
// every other machine's sensor (p50/p99 per receiver, and until the last of the nine); then
// the ten relays' CPU and RSS at rest.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { busLib, fakeSession, person, startSensor } from './latency.mjs';
import { pct, procUsage, readJson, startHub, startRelay, stopAll, waitUntil } from './relay-latency.mjs';

const MACHINES = 10;

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 40 : 300;
  const restMs = quick ? 3_000 : 30_000;
  const hub = await startHub(tmp);
  const { writeSignal, createIdFactory } = await busLib(bin);
  const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
  const machines = [];
  const relays = [];
  const sensors = [];
  try {
    for (let i = 0; i < MACHINES; i++) {
      const dir = join(tmp, `m${i}`);
      mkdirSync(dir, { recursive: true });
      const s = fakeSession(dir, `s${i}`);
      // The relay runs as the machine's owner, not inside the session.
      const env = { ...s.env };
      delete env.CLAUDECODE;
      delete env.CLAUDE_PID;
      delete env.CLAUDE_CODE_SESSION_ID;
      machines.push({ host: `m${i}`, root: s.root, env, s });
    }
    for (const m of machines) relays.push(await startRelay(bin, m, hub.url));
    for (const m of machines) {
      const sensor = startSensor(bin, m.s);
      sensors.push(sensor);
      await sensor.ready();
    }
    // Everyone has heard from everyone (presence), so the fleet is settled before timing.
    await waitUntil(() => machines.every((m) => Object.keys(readJson(join(m.root, 'relay', 'remote.json'))?.hosts ?? {}).length === MACHINES - 1), 60_000, 'presence across the ten');

    const src = machines[0];
    const receivers = sensors.slice(1);
    const each = [];
    const last = [];
    const send = async (i) => {
      const id = newId();
      const from = receivers.map((r) => r.state.out.length);
      const t0 = performance.now();
      // As the first machine's person: any other human is a stranger elsewhere, held, never shown.
      writeSignal(src.root, { kind: 'open' }, id, { from: `external:${person}@pts-1`, project: 'b', cwd: '/b', fromKind: 'human', fromId: person, to: '*', body: `fan-out ${i}` });
      const times = await Promise.all(receivers.map((r, k) => r.waitFor(`id=${id}]`, from[k], 30_000)));
      return times.map((t) => t - t0);
    };
    for (let i = 0; i < 5; i++) await send(-i); // warm the paths
    for (let i = 0; i < n; i++) {
      const t = await send(i);
      each.push(...t);
      last.push(Math.max(...t));
    }
    each.sort((a, b) => a - b);
    last.sort((a, b) => a - b);

    // At rest: nothing to relay, presence and state beats only.
    const u0 = relays.map((p) => procUsage(p.pid).cpuMs);
    const h0 = procUsage(hub.pid).cpuMs;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, restMs));
    const span = Date.now() - t0;
    const rest = relays.map((p, i) => ({ cpu: ((procUsage(p.pid).cpuMs - u0[i]) / span) * 100, rss: procUsage(p.pid).rssMiB }));
    const hubCpu = ((procUsage(hub.pid).cpuMs - h0) / span) * 100;
    const cpus = rest.map((r) => r.cpu).sort((a, b) => a - b);
    const rss = rest.map((r) => r.rss).sort((a, b) => a - b);
    const hubRss = procUsage(hub.pid).rssMiB;
    const f = (v) => v.toFixed(1);
    return {
      title: 'Ten machines: broadcast fan-out and relays at rest',
      markdown: [
        `${MACHINES} bus roots on this machine, each with a session whose sensor (\`attend run\`) watches and an \`attend relay\`, one \`nats-server\` on loopback. ${n} broadcasts written one at a time on the first machine, each timed until its header line appeared on the sensor of every other machine (${MACHINES - 1} receivers).`,
        '',
        '| | p50 | p99 | max |',
        '|---|---|---|---|',
        `| one receiver (${(n * (MACHINES - 1)).toLocaleString('en')} deliveries) | ${f(pct(each, 50))} ms | ${f(pct(each, 99))} ms | ${f(each[each.length - 1])} ms |`,
        `| the last of the ${MACHINES - 1} (${n} broadcasts) | ${f(pct(last, 50))} ms | ${f(pct(last, 99))} ms | ${f(last[last.length - 1])} ms |`,
        '',
        `At rest (${restMs / 1000} s, nothing to relay, a 5 s presence TTL: each machine beats every 2.5 s, and each session's sensor renews its presence): relays ${cpus[0].toFixed(2)}–${cpus[cpus.length - 1].toFixed(2)} % CPU each (${cpus.reduce((a, b) => a + b, 0).toFixed(1)} % for all ten), ${rss[0].toFixed(0)}–${rss[rss.length - 1].toFixed(0)} MiB RSS each; the hub ${hubCpu.toFixed(2)} % CPU, ${hubRss.toFixed(0)} MiB RSS.`,
      ].join('\n'),
    };
  } finally {
    for (const s of sensors) s.proc.kill('SIGTERM');
    await stopAll(relays);
    for (const m of machines) m.s.proc.kill('SIGKILL');
    hub.stop();
  }
}
