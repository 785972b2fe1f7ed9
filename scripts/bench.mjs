#!/usr/bin/env node
// Benchmark runner: runs every module in scripts/bench/*.mjs (or the ones named on the
// command line), each in its own process so one module's warm caches cannot flatter
// another, and writes docs/benchmarks.md with the machine, the date and each section.
//
//   node scripts/bench.mjs            every module
//   node scripts/bench.mjs send       only scripts/bench/send.mjs
//   node scripts/bench.mjs --quick    fewer rounds (a smoke run)
//
// A module exports `default async function ({ bin, tmp, quick }) => ({ title, markdown })`.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const benchDir = join(repo, 'scripts', 'bench');
// The executable as npm links it.
const bin = join(repo, JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).bin.attend);

async function child(file, quick) {
  const tmp = mkdtempSync(join(tmpdir(), 'attend-bench-'));
  try {
    const mod = await import(pathToFileURL(file).href);
    const section = await mod.default({ bin, tmp, quick });
    process.stdout.write(JSON.stringify(section));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--child') return child(args[1], args[2] === 'quick');
  const quick = args.includes('--quick');
  const names = args.filter((a) => !a.startsWith('--'));
  if (!existsSync(bin)) {
    console.error('bench: build first (npm run build)');
    process.exit(2);
  }
  const all = readdirSync(benchDir).filter((f) => f.endsWith('.mjs')).sort();
  const chosen = names.length > 0 ? names.map((n) => (n.endsWith('.mjs') ? n : `${n}.mjs`)) : all;
  const sections = [];
  const failed = [];
  for (const file of chosen) {
    if (!all.includes(file)) {
      console.error(`bench: no module scripts/bench/${file}`);
      process.exit(2);
    }
    console.error(`bench: ${file} ...`);
    const loadBefore = loadavg();
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', join(benchDir, file), quick ? 'quick' : 'full'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0) {
      // One module failing must not throw away what the others measured: report it, go on,
      // and exit 1 at the end. Its section in docs/benchmarks.md stays as it was.
      console.error(`bench: ${file} failed (exit ${r.status})`);
      failed.push(file);
      continue;
    }
    const section = JSON.parse(r.stdout);
    // A shared machine: the load beside the figures, so a reader can weigh them.
    const la = (l) => l.map((x) => x.toFixed(2)).join(' / ');
    section.markdown = `${section.markdown.trim()}\n\nLoad average (1 / 5 / 15 min, ${cpus().length} cores) when this section started: ${la(loadBefore)}; when it ended: ${la(loadavg())}.`;
    sections.push({ file, ...section });
    console.error(`bench: ${file} done`);
  }
  const cpu = cpus();
  const machine = `${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${process.arch}, Node ${process.version}`;
  // A run of some modules replaces only their sections: the rest of the file, measured in
  // an earlier run, stays (each section says what it measured; ratios are within a section).
  const file = join(repo, 'docs', 'benchmarks.md');
  let kept = [];
  if ((names.length > 0 || failed.length > 0) && existsSync(file)) {
    const old = readFileSync(file, 'utf8');
    const parts = old.split(/^(?=## )/m).slice(1);
    const fresh = new Set(sections.map((s) => `## ${s.title}`));
    kept = parts.filter((p) => !fresh.has(p.split('\n')[0]));
  }
  const md = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` (scripts/bench.mjs${quick ? ' --quick' : ''}). Figures are wall times of real processes on one machine; compare them within a run, not across machines.`,
    '',
    `- Machine: ${machine}`,
    `- Date of the latest run: ${new Date().toISOString()}${names.length > 0 ? ` (modules: ${sections.map((s) => basename(s.file, '.mjs')).join(', ')}; the other sections are from earlier runs)` : ''}`,
    '',
    ...sections.flatMap((s) => [`## ${s.title}`, '', s.markdown.trim(), '']),
    ...kept.map((p) => p.trimEnd() + '\n'),
  ].join('\n');
  mkdirSync(join(repo, 'docs'), { recursive: true });
  writeFileSync(file, md);
  process.stdout.write(md);
  if (failed.length > 0) {
    console.error(`bench: failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
