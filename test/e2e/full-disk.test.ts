// Issue #10 item 1: a full disk. The bus lives on a 64 KiB tmpfs; the built CLI runs as a real
// process. On ENOSPC or a short write the command fails with exit 3, nothing half-written is
// renamed into place, no temporary or lock file is left behind, and the previous state file is
// byte for byte what it was. Issue 21 §6: a conduit whose ledger is full shows nothing it has
// not recorded in flight, and once there is room shows each message once (the session's
// ledger directory on a tmpfs of its own, so only the ledger is full).

import { spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSession, type TempBus, fakeSession, makeTempBus, runBin, waitFor } from '../helpers/bus.js';
import { startSensor } from '../helpers/delivery.js';

/** Can this process mount a tmpfs? Answered once, with the reason when it cannot. */
function probeMount(): string | null {
  const bus = makeTempBus();
  const dir = join(bus.dir, 'probe');
  mkdirSync(dir);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status === 0) spawnSync('umount', [dir]);
  bus.cleanup();
  if (r.error) return `mount could not run (${r.error.message})`;
  return r.status === 0 ? null : `mounting a tmpfs needs root or CAP_SYS_ADMIN (mount said: ${(r.stderr || r.stdout).trim()})`;
}
const cannotMount = probeMount();

let bus: TempBus;
let filler: { fd: number; path: string } | undefined;
const sessions: FakeSession[] = [];
/** Mounts inside the bus (a session's ledger directory), unmounted before the bus is. */
const inner: string[] = [];

beforeEach(() => {
  if (cannotMount) return;
  bus = makeTempBus();
  mkdirSync(bus.root);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', bus.root], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
});
afterEach(() => {
  if (cannotMount) return;
  for (const s of sessions.splice(0)) s.kill();
  if (filler !== undefined) closeSync(filler.fd);
  filler = undefined;
  for (const m of inner.splice(0)) spawnSync('umount', [m]);
  spawnSync('umount', [bus.root]);
  bus.cleanup();
});

/** Fill the filesystem of `dir` (the bus's), then free `leavePages` pages of 4 KiB. */
function fill(leavePages = 0, dir = bus.root): void {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w', 0o600);
  const chunk = Buffer.alloc(4096, 120);
  let size = 0;
  try {
    for (;;) {
      const n = writeSync(fd, chunk);
      size += n;
      if (n < chunk.length) break;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  if (leavePages > 0) ftruncateSync(fd, Math.max(0, size - leavePages * 4096));
  filler = { fd, path };
}

function unfill(): void {
  if (filler === undefined) return;
  closeSync(filler.fd);
  rmSync(filler.path);
  filler = undefined;
}

/**
 * A session whose ledger directory is a 64 KiB tmpfs of its own (made before any conduit
 * writes there), in a bus grown to room for a running sensor and its messages.
 */
function sessionWithSmallLedger(name: string): { s: FakeSession; dir: string; log: string } {
  expect(spawnSync('mount', ['-o', 'remount,size=4m', bus.root]).status).toBe(0);
  const s = fakeSession(bus, { name, cwd: join(bus.dir, 'work', name) });
  sessions.push(s);
  const dir = join(bus.root, 'state', 'ledger', encodeURIComponent(s.sessionId));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount failed: ${r.stderr}`);
  inner.push(dir);
  return { s, dir, log: join(dir, 'ledger.jsonl') };
}

/** The log padded with empty lines (readers pass over them) to a page boundary: its next append needs a page of its own. */
function padToPage(log: string): void {
  const size = statSync(log).size;
  if (size % 4096 !== 0) appendFileSync(log, '\n'.repeat(4096 - (size % 4096)));
}

const count = (text: string, what: string) => text.split(what).length - 1;

/** Every file under the root but the filler, with its bytes: what "unchanged" means. */
function tree(dir = bus.root, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    if (prefix === '' && name === 'filler') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) Object.assign(out, tree(p, `${prefix}${name}/`));
    else out[`${prefix}${name}`] = readFileSync(p, 'latin1');
  }
  return out;
}

const asHuman = (args: string[], input?: string) => runBin(args, { env: bus.env, cwd: bus.home, ...(input !== undefined ? { input } : {}) });

describe.skipIf(cannotMount !== null)(`a full disk (${cannotMount ?? 'tmpfs mounted'})`, () => {
  it('a send that does not fit: exit 3, nothing renamed, no temporary left, earlier messages intact', () => {
    const first = asHuman(['send', 'before the disk filled']);
    expect(first.exitCode, first.stderr).toBe(0);
    const before = tree();
    // One page free: the write takes 4096 of ~6000 bytes and reports it (a short write).
    fill(1);
    const r = asHuman(['send', '-'], 'y'.repeat(6000));
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^attend: cannot write .*\.signal: no space left on the device \(ENOSPC\); nothing was changed; free some space and try again\n$/);
    expect(tree()).toEqual(before);
    const listed = asHuman(['inbox', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { messages: { body: string }[] }).messages.map((m) => m.body)).toEqual(['before the disk filled']);
  });

  it('a fan-out that fails half way takes back the copies already written', () => {
    const api = fakeSession(bus, { name: 'api', cwd: join(bus.dir, 'work', 'api') });
    const web = fakeSession(bus, { name: 'web', cwd: join(bus.dir, 'work', 'web') });
    sessions.push(api, web);
    // Both trays and their index files exist, so the only new page a send needs is its file's.
    expect(asHuman(['send', '--to', 'api', '--to', 'web', 'first']).exitCode).toBe(0);
    const before = tree();
    fill(1);
    const r = asHuman(['send', '--to', 'api', '--to', 'web', 'second']);
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    const signals = (t: Record<string, string>) => Object.keys(t).filter((k) => k.endsWith('.signal')).sort();
    expect(signals(tree())).toEqual(signals(before));
  });

  it('with no page free the send fails the same way', () => {
    expect(asHuman(['send', 'one']).exitCode).toBe(0);
    const before = tree();
    fill(0);
    const r = asHuman(['send', 'two']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(tree()).toEqual(before);
  });

  it('the channel store: the previous store intact, no lock or temporary left behind', () => {
    const c = asHuman(['channels', 'create', 'ops']);
    expect(c.exitCode, c.stderr).toBe(0);
    const before = tree();
    const store = Object.keys(before).find((k) => k.endsWith('channels.json'));
    expect(store).toBeDefined();
    fill(0);
    const r = asHuman(['channels', 'create', 'dev']);
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stderr).toMatch(/^attend: cannot write .*: no space left on the device \(ENOSPC\)/);
    expect(tree()).toEqual(before);
    // Once there is room again the next writer does not wait on a leftover lock.
    unfill();
    const again = asHuman(['channels', 'create', 'dev']);
    expect(again.exitCode, again.stderr).toBe(0);
  });

  it('the delivery ledger: a drain on a full disk records nothing, and the message is delivered once there is room', () => {
    const s = fakeSession(bus, { name: 'api', cwd: join(bus.dir, 'work', 'api') });
    sessions.push(s);
    const drain = () => runBin(['inbox', '--drain', '--format', 'plain'], { env: s.env, cwd: s.cwd });
    expect(asHuman(['send', '--to', 'api', 'first']).exitCode).toBe(0);
    const d1 = drain();
    expect(d1.stdout).toContain('first');
    expect(asHuman(['send', '--to', 'api', 'second']).exitCode).toBe(0);
    const before = tree();
    expect(Object.keys(before).some((k) => k.includes('ledger'))).toBe(true);
    fill(0);
    const d2 = drain();
    // The Stop hook never fails the session (exit 0) but says why nothing was recorded.
    expect(d2.exitCode).toBe(0);
    expect(d2.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(d2.stdout).toBe('');
    expect(tree()).toEqual(before);
    unfill();
    const d3 = drain();
    expect(d3.stdout).toContain('second');
    expect(d3.stdout).not.toContain('first');
  });

  it('the drain: a full ledger shows nothing, and once there is room each message is shown once (issue 21 §6)', () => {
    const { s, dir, log } = sessionWithSmallLedger('api');
    const drain = () => runBin(['inbox', '--drain', '--format', 'plain'], { env: s.env, cwd: s.cwd });
    expect(asHuman(['send', '--to', 'api', 'first']).exitCode).toBe(0);
    expect(drain().stdout).toContain('first');
    expect(asHuman(['send', '--to', 'api', 'second']).exitCode).toBe(0);
    // One page left: the drain's lock takes it (its owner file), and the append finds none.
    padToPage(log);
    fill(1, dir);
    const full = drain();
    expect(full.exitCode).toBe(0);
    expect(full.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(full.stdout).toBe('');
    unfill();
    const d = drain();
    expect(count(d.stdout, 'second')).toBe(1);
    expect(d.stdout).not.toContain('first');
    expect(d.stdout).not.toContain('may repeat');
    expect(drain().stdout).toBe('');
  });

  it('the sensor: a wake whose ledger is full prints nothing, tries again by itself, and shows each message once when there is room (issue 21 §6)', async () => {
    const { s, dir, log } = sessionWithSmallLedger('web');
    const sensor = startSensor(s.env, [], s.cwd);
    try {
      expect(asHuman(['send', '--to', 'web', 'first']).exitCode).toBe(0);
      await waitFor(() => sensor.stdout().includes('first'), { what: 'the first message' });
      // Hold the sensor while five messages land and its ledger fills, so its next wake is
      // the one whose record is refused (its lock needs no page: its owner file is there).
      sensor.proc.kill('SIGSTOP');
      for (let i = 0; i < 5; i++) expect(asHuman(['send', '--to', 'web', `while full ${i}`]).exitCode).toBe(0);
      padToPage(log);
      fill(0, dir);
      sensor.proc.kill('SIGCONT');
      await waitFor(() => /scan failed: .*no space left on the device \(ENOSPC\)/.test(sensor.stderr()), { what: 'the refused wake' });
      expect(sensor.stdout()).not.toContain('while full');
      expect(sensor.proc.exitCode).toBeNull();
      // Room again, and no new message to wake it: it recovers by itself.
      unfill();
      await waitFor(() => [0, 1, 2, 3, 4].every((i) => sensor.stdout().includes(`while full ${i}`)), { what: 'the five, after the disk had room' });
      // Its stderr and stdout are two pipes: the note may come a moment after the lines.
      await waitFor(() => sensor.stderr().includes('attend: delivery recovered'), { what: 'the recovered note' });
      expect(asHuman(['send', '--to', 'web', 'after']).exitCode).toBe(0);
      await waitFor(() => sensor.stdout().includes('after'), { what: 'the message after' });
      for (let i = 0; i < 5; i++) expect(count(sensor.stdout(), `while full ${i}`), `while full ${i}`).toBe(1);
      expect(count(sensor.stdout(), 'first')).toBe(1);
      expect(sensor.stdout()).not.toContain('may repeat');
    } finally {
      sensor.proc.kill('SIGCONT');
      sensor.proc.kill('SIGTERM');
      await sensor.exited;
    }
  });

  it('attend install on a full disk: exit 3, settings.json as it was, no half backup', () => {
    // The Claude Code config lives on the full filesystem too.
    const home = join(bus.root, 'home');
    const claude = join(home, '.claude');
    mkdirSync(claude, { recursive: true });
    const settings = join(claude, 'settings.json');
    const text = `${JSON.stringify({ model: 'opus', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } }, null, 2)}\n`;
    writeFileSync(settings, text);
    fill(0);
    const env = { ...bus.env, HOME: home, PATH: '/usr/bin:/bin' };
    delete (env as Record<string, string | undefined>).CLAUDE_CONFIG_DIR;
    const r = runBin(['install'], { env, cwd: home });
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stderr).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(readFileSync(settings, 'utf8')).toBe(text);
    expect(readdirSync(claude)).toEqual(['settings.json']);
  });
});
