// `attend search` against history (issue 23 §4): at 1,000, 10,000 and 100,000 messages, the
// wall time of a search as a process beside `node -e 0` (medians, interleaved), the first
// search's catch-up (indexing the whole history once), and the catch-up of a search after ten
// new messages (what keeping the index up to date costs, paid by the search, not the send).
// And `attend send` on a bus whose search index is up to date beside one that has none: the
// send path does no index work, so the ratio is the noise of the run. Histories are written
// through attend's own writer (file, index line), bodies drawn from a 5,000-word vocabulary.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { busLib } from './latency.mjs';

/** A bus and the person's environment (a search as the person: no session ancestry to fake). */
let BIN = '';
function personBus(dir) {
  const cwd = join(dir, 'work');
  mkdirSync(cwd, { recursive: true });
  const env = { PATH: process.env.PATH, HOME: dir, ATTEND_HOME: join(dir, 'bus'), USER: 'bench' };
  // Family mode and an open #open: the history's sender (an agent with no recorded parent) is
  // shown, so every hit is read and checked as a real reader's would be.
  execFileSync(process.execPath, [BIN, 'policy', '--mode', 'family', '--open', 'everyone'], { env, cwd, stdio: 'ignore' });
  return { env, cwd, root: env.ATTEND_HOME, proc: { kill() {} } };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Wall time of one run, and its CPU time (user + system, from /usr/bin/time) when there is one. */
function timed(cmd, args, env, cwd) {
  const t0 = performance.now();
  const r = TIME ? spawnSync(TIME, ['-f', '@cpu %U %S', cmd, ...args], { env, cwd, encoding: 'utf8' }) : spawnSync(cmd, args, { env, cwd, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`bench: ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const m = /@cpu (\S+) (\S+)/.exec(r.stderr ?? '');
  return { ms, cpu: m ? (Number(m[1]) + Number(m[2])) * 1000 : Number.NaN, out: r.stdout };
}
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

/** A seeded vocabulary and bodies drawn from it, Zipf-like (a few words are very common). */
function corpus(seed = 42) {
  let s = seed;
  const r = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const vocab = [];
  for (let i = 0; i < 5000; i++) {
    let w = '';
    const len = 3 + Math.floor(r() * 7);
    for (let j = 0; j < len; j++) w += String.fromCharCode(97 + Math.floor(r() * 26));
    vocab.push(w);
  }
  const body = () => Array.from({ length: 10 + Math.floor(r() * 25) }, () => vocab[Math.floor(r() ** 2.5 * vocab.length)]).join(' ');
  return { vocab, body };
}

export default async function ({ bin, tmp, quick }) {
  const sizes = process.env.SEARCH_SIZES ? process.env.SEARCH_SIZES.split(',').map(Number) : quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const rounds = quick ? 5 : 11;
  BIN = bin;
  const { writeSignal, createIdFactory } = await busLib(bin);
  const { appendIndexMany, dirStamp } = await import(pathToFileURL(join(dirname(dirname(bin)), 'bus/store/index.js')).href);
  const { vocab, body } = corpus();
  const env = (text) => ({ from: 'claude:old-agent', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'old-agent', to: '*', body: text });
  let clock = Date.now() - 3_600_000;
  const old = createIdFactory({ now: () => clock, pid: 4343, random: Math.random });
  /** The history: files as attend writes them, with their `.index` lines (appendIndexMany, a
   * thousand at a time), without a sync per file (100,000 synced sends take many minutes). */
  const writeHistory = (root, n) => {
    const dir = join(root, 'signals', '_broadcast');
    mkdirSync(dir, { recursive: true });
    for (let b = 0; b < n; b += 1000) {
      const before = dirStamp(dir);
      const batch = [];
      for (let i = b; i < Math.min(n, b + 1000); i++) {
        clock += 1;
        const id = old();
        batch.push(id);
        writeFileSync(join(dir, `${id}.signal`), `claude:old-agent|p|/p|from_kind:agent|from_id:old-agent|to:*|${body()}\n`);
      }
      appendIndexMany(dir, batch, before);
    }
  };
  const rows = [];
  let sendRow = '';
  for (const n of sizes) {
    const s = personBus(mkdtempSync(join(tmp, `search-${n}-`)));
    try {
      writeHistory(s.root, n);
      const search = (...q) => timed(process.execPath, [bin, 'search', ...q], s.env, s.cwd);
      const first = search(vocab[0]).ms;
      // A common word, a rare one, and two words that must both occur.
      const queries = [[vocab[0]], [vocab[4000]], [vocab[1], vocab[7]]];
      const q = [];
      const base = [];
      for (let i = 0; i < rounds; i++) {
        base.push(timed(process.execPath, ['-e', '0'], s.env, s.cwd));
        q.push(search(...queries[i % queries.length]));
      }
      // Ten new messages, then one search that indexes them; beside a search with nothing new.
      const ups = [];
      const idle = [];
      for (let i = 0; i < (quick ? 2 : 5); i++) {
        idle.push(search(vocab[4000]).ms);
        for (let j = 0; j < 10; j++) writeSignal(s.root, { kind: 'open' }, old(), env(body()));
        ups.push(search(vocab[4000]).ms);
      }
      const qm = median(q.map((x) => x.ms));
      const bm = median(base.map((x) => x.ms));
      const qc = median(q.map((x) => x.cpu));
      const bc = median(base.map((x) => x.cpu));
      rows.push(`| ${n.toLocaleString('en')} | ${qm.toFixed(0)} ms | ${bm.toFixed(0)} ms | ${(qm / bm).toFixed(2)}× | ${qc.toFixed(0)} ms | ${bc.toFixed(0)} ms | ${(first / 1000).toFixed(2)} s | ${((median(ups) - median(idle)) / 10).toFixed(2)} ms |`);
      if (n === sizes[0]) {
        // send beside a bus with the same history and no search index, interleaved.
        const fresh = personBus(mkdtempSync(join(tmp, 'search-send-')));
        writeHistory(fresh.root, n);
        try {
          const a = [];
          const b = [];
          for (let i = 0; i < rounds; i++) {
            a.push(timed(process.execPath, [bin, 'send', `plain send ${i}`], fresh.env, fresh.cwd).ms);
            b.push(timed(process.execPath, [bin, 'send', `indexed bus send ${i}`], s.env, s.cwd).ms);
          }
          sendRow = `\`attend send\` on a bus with an up-to-date search index: ${median(b).toFixed(0)} ms, on one without: ${median(a).toFixed(0)} ms (${(median(b) / median(a)).toFixed(2)}×; the send path does no index work, the next search indexes what it wrote).`;
        } finally {
          fresh.proc.kill();
        }
      }
    } finally {
      s.proc.kill();
    }
  }
  const markdown = [
    `Medians of ${rounds} runs, interleaved with \`node -e 0\`; CPU is user + system time of the process (/usr/bin/time), which a loaded machine inflates less than wall time; histories in #open. "First search" indexes the whole history (once per bus); "catch-up" is what a search pays per message written since the last one (ten new messages, against a search with nothing new).`,
    '',
    '| messages | `attend search` wall | `node -e 0` wall | ratio | search CPU | `node -e 0` CPU | first search | catch-up per new message |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    sendRow,
  ].join('\n');
  return { title: 'Search (issue 23 §4)', markdown };
}
