// Lock takeover (issue #9 §5): a live holder keeps its lock however old it is, and when a
// stale lock is broken exactly one of the racing waiters gets it. Real processes race.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AttendError, EXIT } from '../../tools/wire/errors.js';
import { tryAcquire, withLock } from '../../tools/bus/store/lock.js';
import { procInfoFromProc } from '../../tools/identity/system.js';
import { type TempBus, useTempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const LOCK = fileURLToPath(new URL('../../dist/tools/bus/store/lock.js', import.meta.url));

/** A pid that is certainly not running: a child that has exited. */
async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => p.once('exit', r));
  return p.pid as number;
}

describe('withLock takeover', () => {
  it('a live holder keeps its lock however long ago it took it', () => {
    const path = join(bus.dir, 'held.lock');
    const text = `${process.pid} ${procInfoFromProc(process.pid)?.start ?? ''} ${Date.now() - 3_600_000}`;
    writeFileSync(path, text);
    let ran = false;
    let err: unknown;
    try {
      withLock(path, () => (ran = true), { waitMs: 300 });
    } catch (e) {
      err = e;
    }
    expect(ran).toBe(false);
    expect(err).toBeInstanceOf(AttendError);
    expect((err as AttendError).exitCode).toBe(EXIT.bus);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('a lock whose owner died is taken over (positive control)', async () => {
    const path = join(bus.dir, 'dead.lock');
    writeFileSync(path, `${await deadPid()} 1 ${Date.now()}`);
    expect(withLock(path, () => 'ran', { waitMs: 300 })).toBe('ran');
    expect(existsSync(path)).toBe(false);
  });

  it('a lock being taken (no owner written yet) is not broken while it is fresh', () => {
    const path = join(bus.dir, 'fresh.lock');
    writeFileSync(path, '');
    expect(tryAcquire(path)).toEqual({ ok: false, owner: null });
  });
});

/** A worker that waits for `go`, tries once, prints ok/no, and holds until its stdin ends. */
const WORKER = `
const { tryAcquire } = await import(${JSON.stringify(LOCK)});
const fs = await import('node:fs');
const [lock, go, mode] = process.argv.slice(1);
process.stdout.write('ready\\n');
while (!fs.existsSync(go)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
const r = tryAcquire(lock, { link: mode === 'link' });
process.stdout.write((r.ok ? 'ok' : 'no') + '\\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

describe('breaking a stale lock with racing processes', () => {
  it.each(['excl', 'link'])('exactly one of 8 racing waiters gets it, in each of 5 rounds (taken by %s)', async (mode) => {
    for (let round = 0; round < 5; round++) {
      const path = join(bus.dir, `race-${round}.lock`);
      const go = join(bus.dir, `go-${round}`);
      writeFileSync(path, `${await deadPid()} 1 ${Date.now() - 60_000}`);
      const workers: { proc: ChildProcessWithoutNullStreams; out: string }[] = [];
      for (let i = 0; i < 8; i++) {
        const proc = spawn(process.execPath, ['--input-type=module', '-e', WORKER, path, go, mode], { stdio: 'pipe' });
        const w = { proc, out: '' };
        proc.stdout.on('data', (d: Buffer) => (w.out += d.toString()));
        workers.push(w);
      }
      try {
        await waitFor(() => workers.every((w) => w.out.includes('ready')), { timeoutMs: 30_000, what: 'the workers to start' });
        writeFileSync(go, '');
        await waitFor(() => workers.every((w) => /\n(ok|no)\n/.test(w.out)), { timeoutMs: 30_000, what: 'every worker to try' });
        const won = workers.filter((w) => w.out.includes('\nok\n'));
        expect(won).toHaveLength(1);
        // The lock names the winner.
        expect(readFileSync(path, 'utf8').split(' ')[0]).toBe(String(won[0]!.proc.pid));
      } finally {
        for (const w of workers) w.proc.stdin.end();
        await Promise.all(workers.map((w) => new Promise((r) => (w.proc.exitCode !== null ? r(null) : w.proc.once('exit', r)))));
      }
    }
  });

  it('8 processes × 25 increments under withLock lose no update', async () => {
    const path = join(bus.dir, 'count.lock');
    const counter = join(bus.dir, 'count');
    writeFileSync(counter, '0');
    writeFileSync(path, `${await deadPid()} 1 ${Date.now() - 60_000}`);
    const script = `
const { withLock } = await import(${JSON.stringify(LOCK)});
const fs = await import('node:fs');
const [lock, file] = process.argv.slice(1);
for (let i = 0; i < 25; i++) withLock(lock, () => {
  const n = Number(fs.readFileSync(file, 'utf8'));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
  fs.writeFileSync(file, String(n + 1));
});`;
    const procs = Array.from({ length: 8 }, () => spawn(process.execPath, ['--input-type=module', '-e', script, path, counter], { stdio: 'inherit' }));
    const codes = await Promise.all(procs.map((p) => new Promise<number | null>((r) => p.once('exit', r))));
    expect(codes).toEqual(Array(8).fill(0));
    expect(Number(readFileSync(counter, 'utf8'))).toBe(200);
  });
});

describe('withLock takes its lock by link', () => {
  it('a take and release leave no lock file; the owner file is linked while held and goes when the process exits', async () => {
    const dir = join(bus.dir, 'linked');
    mkdirSync(dir);
    const lock = join(dir, 'state.lock');
    const script = `
const { withLock } = await import(${JSON.stringify(LOCK)});
const fs = await import('node:fs');
const [lock] = process.argv.slice(1);
const seen = [];
for (let i = 0; i < 3; i++) withLock(lock, () => {
  const st = fs.statSync(lock);
  const owner = fs.readdirSync(${JSON.stringify(dir)}).filter((n) => n.startsWith('.owner-'));
  seen.push({ nlink: st.nlink, owner, text: fs.readFileSync(lock, 'utf8') });
});
seen.push({ after: fs.existsSync(lock), owners: fs.readdirSync(${JSON.stringify(dir)}).filter((n) => n.startsWith('.owner-')).length });
process.stdout.write(JSON.stringify(seen));`;
    const p = spawn(process.execPath, ['--input-type=module', '-e', script, lock], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    expect(await new Promise((r) => p.once('exit', r))).toBe(0);
    const seen = JSON.parse(out) as [{ nlink: number; owner: string[]; text: string }, unknown, unknown, { after: boolean; owners: number }];
    // While held, the lock's name and the one owner file are the same file, naming the process.
    expect(seen[0].nlink).toBe(2);
    expect(seen[0].owner).toEqual([`.owner-${p.pid}-${seen[0].text.split(' ')[1]}`]);
    expect(seen[0].text.split(' ')[0]).toBe(String(p.pid));
    expect(seen[3]).toEqual({ after: false, owners: 1 });
    // Gone with the process.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a lock linked to the owner file of a process that died is taken over', async () => {
    const lock = join(bus.dir, 'dead-link.lock');
    const owner = join(bus.dir, '.owner-1-1');
    writeFileSync(owner, `${await deadPid()} 1 ${Date.now() - 60_000}`);
    linkSync(owner, lock);
    expect(withLock(lock, () => 'ran', { waitMs: 300 })).toBe('ran');
    expect(existsSync(lock)).toBe(false);
  });
});
