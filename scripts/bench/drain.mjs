// Drain wall time: `attend inbox --drain` with 100,000 messages of history in the receive
// set and 10 new, against an empty bus with 10 new. The ledger's watermarks mean history is
// never read, and the directory index hint (tools/bus/store/dir-index.ts) means it is not listed
// either once the first (cold) drain has listed it. The history is written without index
// lines, as an older attend would have.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { busLib, fakeSession, person } from './latency.mjs';

function drainMs(bin, s) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, 'inbox', '--drain', '--format', 'hook'], { cwd: s.cwd, env: s.env, input: '{"stop_hook_active":false}', encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0 || !r.stdout.includes('additionalContext')) throw new Error(`drain failed: ${r.stderr}`);
  return ms;
}

async function measure(bin, tmp, history, runs) {
  const s = fakeSession(tmp, `drain-${history}`);
  const { writeSignal, createIdFactory } = await busLib(bin);
  try {
    if (history > 0) {
      // History an hour old, written as files directly (the same line `attend send` writes).
      const dir = join(s.root, 'signals', '_broadcast');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      let clock = Date.now() - 3_600_000;
      const oldId = createIdFactory({ now: () => clock, pid: 4242, random: Math.random });
      for (let i = 0; i < history; i++) {
        clock += 1;
        writeFileSync(join(dir, `${oldId()}.signal`), `external:old@pts-1|p|/p|from_kind:human|from_id:old|to:*|history ${i}\n`, { mode: 0o600 });
      }
    }
    const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
    const tray = { kind: 'tray', key: null };
    const { attendKey } = await import(pathToFileURL(join(dirname(dirname(bin)), 'wire/names.js')).href);
    tray.key = attendKey(s.cwd);
    const ten = () => {
      for (let i = 0; i < 10; i++) writeSignal(s.root, i % 2 ? { kind: 'open' } : tray, newId(), { from: `external:${person}@pts-1`, project: 'b', cwd: '/b', fromKind: 'human', fromId: person, to: i % 2 ? '*' : s.sessionId, body: `new ${i}` });
    };
    // The session's first drain starts its ledger (cold start); then time warm drains.
    ten();
    drainMs(bin, s);
    const times = [];
    for (let r = 0; r < runs; r++) {
      ten();
      times.push(drainMs(bin, s));
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  } finally {
    s.proc.kill('SIGKILL');
  }
}

export default async function ({ bin, tmp, quick }) {
  const runs = quick ? 3 : 7;
  const empty = await measure(bin, tmp, 0, runs);
  const full = await measure(bin, tmp, 100_000, runs);
  return {
    title: 'Drain wall time against history',
    markdown: [
      `\`attend inbox --drain --format hook\` as a process (median of ${runs}; node start-up included), 10 new messages each time.`,
      '',
      '| bus | wall time |',
      '|---|---|',
      `| empty + 10 new | ${empty.toFixed(0)} ms |`,
      `| 100,000 messages of history + 10 new | ${full.toFixed(0)} ms |`,
      `| ratio | ${(full / empty).toFixed(2)}× (goal ≤ 1.5×) |`,
    ].join('\n'),
  };
}
