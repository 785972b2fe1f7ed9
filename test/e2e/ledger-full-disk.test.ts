// Issue 21 §6: the ledger is written before a line is printed. On a full disk the sensor once
// showed 5 messages twice (it printed, then its ledger write failed). Here the session's
// ledger directory is a full 64 KiB tmpfs: a sensor wake (scanOnce) and a drain (drainOnce),
// run in-process, fail and print nothing, and once there is room each message is shown once.
// In the e2e tier because the mount is a child process (mount needs root or CAP_SYS_ADMIN;
// skipped otherwise, with the reason). The real sensor's proof is in full-disk.test.ts; a
// stdout that closes part-way is test/sensor/record-first.test.ts.

import { spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ledgerFile, sessionLedgerDir } from '../../tools/bus/delivery/ledger-log.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import { drainOnce } from '../../tools/drain/drain.js';
import { scanOnce } from '../../tools/sensor/scan.js';
import { nameLookup } from '../../tools/wire/display.js';
import { attendKey } from '../../tools/wire/names.js';
import { type TempBus, makeTempBus, useTempBus } from '../helpers/temp-bus.js';
import { agent, headerIds, ids, put } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function probeMount(): string | null {
  const b = makeTempBus();
  const dir = join(b.dir, 'probe');
  mkdirSync(dir);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status === 0) spawnSync('umount', [dir]);
  b.cleanup();
  if (r.error) return `mount could not run (${r.error.message})`;
  return r.status === 0 ? null : `mounting a tmpfs needs root or CAP_SYS_ADMIN (mount said: ${(r.stderr || r.stdout).trim()})`;
}
const cannotMount = probeMount();

const mounted: string[] = [];
let filler: { fd: number; path: string } | undefined;
afterEach(() => {
  if (filler) closeSync(filler.fd);
  filler = undefined;
  for (const m of mounted.splice(0)) spawnSync('umount', [m]);
});

/** The session's ledger directory on a 64 KiB tmpfs of its own. */
function ledgerOnTmpfs(sid: string): string {
  const dir = sessionLedgerDir(bus.root, sid);
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
  mounted.push(dir);
  return dir;
}

/**
 * Fill the ledger's filesystem: the log padded with empty lines (readers pass over them) to a
 * page boundary, so its next append needs a page, and every free page taken by a filler.
 */
function fill(dir: string, sid: string): void {
  const log = ledgerFile(bus.root, sid);
  const size = statSync(log).size;
  if (size % 4096 !== 0) appendFileSync(log, '\n'.repeat(4096 - (size % 4096)));
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w', 0o600);
  const chunk = Buffer.alloc(4096, 120);
  try {
    for (;;) if (writeSync(fd, chunk) < chunk.length) break;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  filler = { fd, path };
}

function unfill(): void {
  if (!filler) return;
  closeSync(filler.fd);
  rmSync(filler.path);
  filler = undefined;
}

function wake(who: ReturnType<typeof agent>, write?: (line: string) => void) {
  const lines: string[] = [];
  const r = scanOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (me) => nameLookup([], me), write: write ?? ((l) => void lines.push(l)), warn: () => {} }, who);
  return { r, lines, ids: headerIds(lines.join('\n')) };
}

describe.skipIf(cannotMount !== null)(`record first, then show: a full disk (${cannotMount ?? 'tmpfs mounted'})`, () => {
  it('a sensor wake whose ledger cannot be written prints nothing; with room again each message is shown once', () => {
    const who = agent('00000000-0000-4000-8000-0000000000d1', `${bus.dir}/work/me`);
    const dir = ledgerOnTmpfs(who.id);
    const mk = ids();
    const tray = { kind: 'tray', key: attendKey(who.origin) } as const;
    const first = put(bus.root, mk, { scope: tray, to: who.id, body: 'first' });
    expect(wake(who).ids).toEqual([first]);
    const five = Array.from({ length: 5 }, (_, i) => put(bus.root, mk, { scope: tray, to: who.id, body: `while full ${i}` }));
    fill(dir, who.id);
    const lines: string[] = [];
    expect(() => wake(who, (l) => void lines.push(l))).toThrow(/ENOSPC/);
    expect(lines).toEqual([]);
    // Still full: the same again, nothing printed.
    expect(() => wake(who, (l) => void lines.push(l))).toThrow(/ENOSPC/);
    expect(lines).toEqual([]);
    unfill();
    expect(wake(who).ids).toEqual(five);
    expect(wake(who).ids).toEqual([]);
  });

  it('a drain whose ledger cannot be written writes nothing; with room again it delivers once', () => {
    const who = agent('00000000-0000-4000-8000-0000000000d2', `${bus.dir}/work/me2`);
    const dir = ledgerOnTmpfs(who.id);
    const out: string[] = [];
    const drain = () => drainOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (me) => nameLookup([], me), write: (t) => void out.push(t), warn: () => {} }, who, { stopHookActive: false }, 'plain');
    const mk = ids();
    const tray = { kind: 'tray', key: attendKey(who.origin) } as const;
    put(bus.root, mk, { scope: tray, to: who.id, body: 'first' });
    drain();
    expect(out.join('')).toContain('first');
    out.length = 0;
    put(bus.root, mk, { scope: tray, to: who.id, body: 'second' });
    fill(dir, who.id);
    expect(drain).toThrow(/ENOSPC/);
    expect(out).toEqual([]);
    unfill();
    expect(drain().reason).toBe('delivered');
    expect(out.join('')).toContain('second');
    expect(out.join('')).not.toContain('first');
    out.length = 0;
    expect(drain().reason).toBe('nothing-pending');
  });
});
