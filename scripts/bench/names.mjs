// Name resolution against the number of parties the bus has known (issue "The first hour",
// item 2: "no per-message cost growing with parties"). A bus whose names file holds 10, 100
// and 1,000 known parties (each with an earlier name, as a bus that upgraded keeps them) and a
// live roster of 100; for each size, in-process: resolving a live party's name, a gone party's
// name and a gone party's earlier name as a send does (a fresh roster array per send, the
// known tier read through its cache), and the roster's naming pass over 100 live parties
// when nothing changed; then `attend send --to <gone name>` as a process. The resolver indexes
// each array once (tools/bus/presence/targets.ts), so a lookup should not grow with the file.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export default async function ({ bin, tmp, quick }) {
  const dist = join(bin, '..', '..');
  const presence = await import(pathToFileURL(join(dist, 'bus', 'presence', 'index.js')).href);
  const names = await import(pathToFileURL(join(dist, 'bus', 'presence', 'names.js')).href);
  const sizes = [10, 100, 1000];
  const lookups = quick ? 2_000 : 20_000;
  const sends = quick ? 3 : 11;
  const rows = [];
  for (const size of sizes) {
    const root = join(tmp, `bus-${size}`);
    const home = join(tmp, `home-${size}`);
    const work = join(tmp, `work-${size}`);
    mkdirSync(join(root, 'state'), { recursive: true, mode: 0o700 });
    mkdirSync(home, { recursive: true });
    mkdirSync(join(tmp, `claude-${size}`, 'sessions'), { recursive: true });
    const now = Date.now();
    const entries = {};
    for (let i = 0; i < size; i++) {
      const id = `codex-${i.toString(36)}.z${i}`;
      entries[id] = { name: `codex-p${i}`, at: now - 3_600_000 - i, kind: 'agent', origin: join(work, `p${i}`), seen: now - 3_600_000 - i, base: `codex-p${i}`, since: now - 7_200_000, aliases: [`Old-${i}`] };
    }
    writeFileSync(join(root, 'state', 'names.json'), `${JSON.stringify({ v: 2, names: entries })}\n`, { mode: 0o600 });
    // The live: 100 agents, named already (their entries are fresh), as a roster lists them.
    const live = Array.from({ length: 100 }, (_, i) => ({ id: `gemini-${i.toString(36)}.y${i}`, kind: 'agent', origin: join(work, `l${i}`), name: '' }));
    const given = names.nameParties(root, live, now);
    const peers = live.map((p) => ({ ...p, name: given.get(p.id).name, presence: [], lastSeen: now }));
    const opts = (known) => ({ cwd: home, home, localHost: null, known: [known] });
    const tier = () => presence.knownParties(root, new Set(), { now, localHost: null }, 'recorded');
    const target = { live: peers[50].name, gone: `codex-p${Math.floor(size / 2)}`, alias: `Old-${size - 1}` };
    const perLookup = {};
    for (const [what, t] of Object.entries(target)) {
      const ok = presence.lookupTarget(t, [...peers], opts(tier));
      if (!ok.ok) throw new Error(`${t} did not resolve: ${JSON.stringify(ok).slice(0, 200)}`);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < lookups; i++) presence.lookupTarget(t, [...peers], opts(tier));
      perLookup[what] = Number(process.hrtime.bigint() - t0) / 1e3 / lookups;
    }
    const t1 = process.hrtime.bigint();
    const passes = quick ? 200 : 2_000;
    for (let i = 0; i < passes; i++) names.nameParties(root, live, now);
    const pass = Number(process.hrtime.bigint() - t1) / 1e3 / passes;
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ATTEND_HOME: root, CLAUDE_CONFIG_DIR: join(tmp, `claude-${size}`), USER: 'bench' };
    const ms = [];
    for (let r = 0; r < sends; r++) {
      const s0 = process.hrtime.bigint();
      const res = spawnSync(process.execPath, [bin, 'send', '--to', target.gone, 'hi'], { env, cwd: home, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
      if (res.status !== 0) throw new Error(`send exited ${res.status}: ${res.stderr}`);
      ms.push(Number(process.hrtime.bigint() - s0) / 1e6);
    }
    rows.push({ size, ...perLookup, pass, send: median(ms) });
  }
  const base = rows[0];
  const ratio = (r, k) => (r[k] / base[k]).toFixed(2);
  const last = rows[rows.length - 1];
  return {
    title: 'Name resolution against known parties',
    markdown: [
      `Target ("The first hour", item 2): resolving a name costs the same however many parties the bus has known. Measured, 1,000 known parties against 10: a gone party's name **${ratio(last, 'gone')}×**, an earlier name **${ratio(last, 'alias')}×**, a live one **${ratio(last, 'live')}×**, the roster's naming pass **${ratio(last, 'pass')}×**, \`attend send --to\` **${ratio(last, 'send')}×** (one run; lookups over a roster of 100 live parties, a fresh roster array per lookup as per send, ${lookups.toLocaleString('en')} each; sends are medians of ${sends}). The known tier is parsed and indexed once per change of the names file, not per send.`,
      '',
      '| known parties | live name µs | gone name µs | earlier name µs | naming pass (100 live) µs | attend send --to (gone) ms |',
      '| ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows.map((r) => `| ${r.size.toLocaleString('en')} | ${r.live.toFixed(1)} | ${r.gone.toFixed(1)} | ${r.alias.toFixed(1)} | ${r.pass.toFixed(1)} | ${r.send.toFixed(1)} |`),
    ].join('\n'),
  };
}
