// Through one relay (issue 13): a burst of 10,000 messages written on machine A as fast as
// the bus library writes them (by one process, then by four at once), timed until machine B
// holds every one (messages/s); the same as a backlog; the two relays' CPU and RSS at rest;
// and the hub SIGKILLed, 1,000 messages written meanwhile, the hub restarted: time from the
// restart until B holds them all.

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { countSignals, procUsage, startRelay, stopAll, twoMachines, waitUntil } from './relay-latency.mjs';

const WRITERS = 4;

/** One writer process: `count` broadcasts through the bus library, as `attend send` writes them. */
function writer(bin, root, count, tag) {
  const tools = dirname(dirname(bin));
  const code = `
    const { pathToFileURL } = await import('node:url');
    const [tools, root, n, tag] = process.argv.slice(1);
    const { writeSignal } = await import(pathToFileURL(tools + '/bus/store/messages.js').href);
    const { createIdFactory } = await import(pathToFileURL(tools + '/wire/ids.js').href);
    const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
    for (let i = 0; i < Number(n); i++) writeSignal(root, { kind: 'open' }, newId(), { from: 'external:' + tag + '@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: tag, to: '*', body: 'burst ' + i });`;
  return new Promise((resolve, reject) =>
    spawn(process.execPath, ['--input-type=module', '-e', code, tools, root, String(count), tag], { stdio: ['ignore', 'ignore', 'inherit'] }).on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`writer ${tag} exited ${c}`)))),
  );
}

export default async function ({ bin, tmp, quick }) {
  const n = quick ? 2_000 : 10_000;
  const { hub, a, b, writeSignal, newId } = await twoMachines(bin, tmp);
  const procs = [];
  const write = (i) => writeSignal(a.root, { kind: 'open' }, newId(), { from: 'external:alpha-user@pts-1', project: 'b', cwd: '/b', fromKind: 'human', fromId: 'alpha-user', to: '*', body: `burst ${i}` });
  const bDir = join(b.root, 'signals', '_broadcast');
  try {
    procs.push(await startRelay(bin, a, hub.url), await startRelay(bin, b, hub.url));
    // At rest: 10 s with nothing to do.
    const rest0 = procs.map((p) => procUsage(p.pid));
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, quick ? 3_000 : 10_000));
    const rest = procs.map((p, i) => ({ cpu: ((procUsage(p.pid).cpuMs - rest0[i].cpuMs) / (Date.now() - t0)) * 100, rss: procUsage(p.pid).rssMiB }));

    const start = performance.now();
    for (let i = 0; i < n; i++) {
      write(i);
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    const written = performance.now() - start;
    await waitUntil(() => countSignals(bDir) >= n, 120_000, `${n} at bravo`);
    const all = performance.now() - start;

    // The same burst from four processes at once, as four sessions would write it: one
    // writer process is the limit above (each write is synced), not the relay.
    const startMany = performance.now();
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(bin, a.root, n / WRITERS, `w${w}`)));
    const writtenMany = performance.now() - startMany;
    await waitUntil(() => countSignals(bDir) >= 2 * n, 120_000, `${2 * n} at bravo`);
    const allMany = performance.now() - startMany;

    // A backlog: alpha's relay stopped, n written, the relay started again; timed from its
    // spawn until bravo holds them all (what one relay moves when the writer is not the limit).
    await stopAll([procs[0]]);
    for (let i = 0; i < n; i++) {
      write(3 * n + i);
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    const drainStart = performance.now();
    procs[0] = await startRelay(bin, a, hub.url);
    await waitUntil(() => countSignals(bDir) >= 3 * n, 120_000, `backlog at bravo`);
    const drained = performance.now() - drainStart;

    // The hub dies; alpha keeps writing; the hub comes back.
    await hub.kill();
    for (let i = 0; i < 1000; i++) write(5 * n + i);
    const restart = performance.now();
    await hub.restart();
    await waitUntil(() => countSignals(bDir) >= 3 * n + 1000, 120_000, 'catch-up at bravo');
    const catchUp = performance.now() - restart;

    return {
      title: 'Cross-machine burst, rest and hub restart',
      markdown: [
        `Two bus roots with an \`attend relay\` each and one \`nats-server\` on loopback. ${n.toLocaleString('en')} broadcasts written on A as fast as the bus library writes them (each write synced, as \`attend send\` does), by one process and then by ${WRITERS} at once; timed from the first write until B held all of them. A single writer process is slower than the relay: its own rate is in the second column.`,
        '',
        '| messages | written on A in | all at B after | throughput | goal |',
        '|---|---|---|---|---|',
        `| ${n.toLocaleString('en')}, one writer process | ${(written / 1000).toFixed(2)} s (${Math.round(n / (written / 1000)).toLocaleString('en')}/s) | ${(all / 1000).toFixed(2)} s | ${Math.round(n / (all / 1000)).toLocaleString('en')} msg/s | ≥ 2,000 msg/s |`,
        `| ${n.toLocaleString('en')}, ${WRITERS} writer processes at once | ${(writtenMany / 1000).toFixed(2)} s (${Math.round(n / (writtenMany / 1000)).toLocaleString('en')}/s) | ${(allMany / 1000).toFixed(2)} s | ${Math.round(n / (allMany / 1000)).toLocaleString('en')} msg/s | ≥ 2,000 msg/s |`,
        `| ${n.toLocaleString('en')} (a backlog: relay A started after they were written) | – | ${(drained / 1000).toFixed(2)} s from the relay's spawn | ${Math.round(n / (drained / 1000)).toLocaleString('en')} msg/s | ≥ 2,000 msg/s |`,
        '',
        `At rest (${quick ? 3 : 10} s, nothing to relay): relay A ${rest[0].cpu.toFixed(2)} % CPU, ${rest[0].rss.toFixed(0)} MiB RSS; relay B ${rest[1].cpu.toFixed(2)} % CPU, ${rest[1].rss.toFixed(0)} MiB RSS.`,
        '',
        `Hub SIGKILLed, 1,000 messages written on A while it was down, hub restarted on the same store: B held all of them ${(catchUp / 1000).toFixed(2)} s after the restart began.`,
      ].join('\n'),
    };
  } finally {
    await stopAll(procs);
    hub.stop();
  }
}
