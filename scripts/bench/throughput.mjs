// Sustained throughput (issue #12 §6 and §8): 1 and 4 writer processes writing through
// attend's own writer as fast as they can while one session's sensor delivers, and a reader
// process that reads the directory's index hint in a loop the way every delivery cycle
// does. Reported: messages/s written, the sensor's lag (write → its line on stdout) and how
// many reader cycles could not trust the index and had to list the directory in full.

import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fakeSession, pct } from './latency.mjs';


function collect(proc) {
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  return new Promise((resolve, reject) => proc.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exited ${code}`)))));
}

async function run(bin, tmp, writers, total) {
  const tools = dirname(dirname(bin));
  const s = fakeSession(tmp, `tp-${writers}`);
  const dir = join(s.root, 'signals', '_broadcast');
  mkdirSync(dir, { recursive: true });
  // The sensor with --trace, so messages folded into a digest still name their ids.
  const sensor = spawn(process.execPath, [bin, 'run', '--trace'], { cwd: s.cwd, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const arrived = new Map();
  let buf = '';
  const onData = (d) => {
    const now = Date.now();
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const h = /\bid=([A-Za-z0-9_-]+)\]$/.exec(line);
      if (h) arrived.set(h[1], now);
      const t = /^attend: trace digest ids=([A-Za-z0-9_,-]*)/.exec(line);
      if (t) for (const id of t[1].split(',')) if (id) arrived.set(id, now);
    }
  };
  sensor.stdout.setEncoding('utf8').on('data', onData);
  sensor.stderr.setEncoding('utf8').on('data', onData);
  const presence = join(s.root, 'state', 'presence', `${encodeURIComponent(s.sessionId)}~sensor.json`);
  const { existsSync } = await import('node:fs');
  for (let t0 = Date.now(); !existsSync(presence); ) {
    if (Date.now() - t0 > 20_000) throw new Error('the sensor did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 2_500)); // past its start-up probe and first full listing

  // The reader: readIndex in a loop from its own remembered state, as a delivery cycle does.
  const reader = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { readIndex } = await import(${JSON.stringify(join(tools, 'bus/store/dir-index.js'))});
       let st = readIndex(process.argv[1], undefined, Date.now()).state; let ok = 0, unsettled = 0, full = 0; const why = {};
       let stop = false; process.on('SIGTERM', () => (stop = true));
       while (!stop) {
         const r = readIndex(process.argv[1], st, Date.now());
         if (r.ok) { if (r.settled) ok++; else unsettled++; st = r.state; }
         // Before the first message there is no index yet: nothing to trust or distrust.
         else if (r.why !== 'no index' || st !== undefined) { full++; why[r.why] = (why[r.why] ?? 0) + 1; st = r.state; }
         await new Promise((res) => setTimeout(res, 1));
       }
       console.log(JSON.stringify({ ok, unsettled, full, why }));`,
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const readerOut = collect(reader);

  const per = Math.ceil(total / writers);
  const script = `const { writeSignal } = await import(${JSON.stringify(join(tools, 'bus/store/messages.js'))});
    const { createIdFactory } = await import(${JSON.stringify(join(tools, 'wire/ids.js'))});
    const mk = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
    const n = Number(process.argv[2]); const t0 = Date.now();
    for (let i = 0; i < n; i++) writeSignal(process.argv[1], { kind: 'open' }, mk(), { from: 'external:w@pts-1', project: 'p', cwd: '/p', fromKind: 'human', fromId: 'writer', to: '*', body: 'load ' + i });
    console.log(JSON.stringify({ t0, t1: Date.now() }));`;
  const procs = Array.from({ length: writers }, () => spawn(process.execPath, ['--input-type=module', '-e', script, s.root, String(per)], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const spans = (await Promise.all(procs.map(collect))).map((o) => JSON.parse(o));
  const start = Math.min(...spans.map((x) => x.t0));
  const end = Math.max(...spans.map((x) => x.t1));
  const written = per * writers;
  for (let t0 = Date.now(); arrived.size < written; ) {
    if (Date.now() - t0 > 120_000) throw new Error(`the sensor delivered ${arrived.size} of ${written}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const lastAt = Math.max(...arrived.values());
  reader.kill('SIGTERM');
  const cycles = JSON.parse(await readerOut);
  sensor.kill('SIGTERM');
  s.proc.kill('SIGKILL');
  // Lag per message: from its id's time (when the writer made it) to its line.
  const lags = [...arrived].map(([id, at]) => at - parseInt(id.slice(0, 9), 36)).sort((a, b) => a - b);
  return {
    writers,
    written,
    rate: written / ((end - start) / 1000),
    p50: pct(lags, 50),
    p99: pct(lags, 99),
    drained: (lastAt - end) / 1000,
    cycles,
  };
}

export default async function ({ bin, tmp, quick }) {
  const total = quick ? 1_000 : 4_000;
  const rows = [];
  for (const w of [1, 4]) rows.push(await run(bin, tmp, w, total));
  const share = (c) => (100 * c.full) / Math.max(1, c.ok + c.unsettled + c.full);
  return {
    title: 'Sustained throughput and index trust',
    markdown: [
      `${total.toLocaleString('en-US')} broadcasts written to #open by 1 and by 4 writer processes as fast as attend's writer goes (each file synced, its index line appended), while one session's \`attend run\` delivers them and a reader process reads the index hint in a loop, as every delivery cycle does. Lag: from the id's time to the sensor's line (or the digest naming it). Goal (issue #12 §6): with 4 writers racing, ≤ 5 % of reader cycles fall back to a full listing.`,
      '',
      '| writers | written | messages/s | sensor lag p50 | sensor lag p99 | sensor done after the last write | reader cycles | fell back to a full listing | unsettled (looked again) |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows.map((r) => {
        const c = r.cycles;
        const n = c.ok + c.unsettled + c.full;
        return `| ${r.writers} | ${r.written.toLocaleString('en-US')} | ${Math.round(r.rate).toLocaleString('en-US')} | ${r.p50} ms | ${r.p99} ms | ${r.drained.toFixed(2)} s | ${n.toLocaleString('en-US')} | ${c.full} (${share(c).toFixed(1)} %) | ${c.unsettled} |`;
      }),
    ].join('\n'),
  };
}
