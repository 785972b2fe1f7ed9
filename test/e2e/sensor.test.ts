// `attend run` as a real child process against a temporary bus, reading its stdout.

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, constants as fsc } from 'node:fs';
import { join as pjoin } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { attendKey } from '../../tools/wire/names.js';
import { BIN, ME, fakeSession, makeTempBus, type FakeSession, type TempBus, useFamilyPolicy, waitFor } from '../helpers/bus.js';
import { headerIds, ids, join, leave, put, startSensor, type SensorProc, traceIds } from '../helpers/delivery.js';

let bus: TempBus;
const procs: SensorProc[] = [];
const sessions: FakeSession[] = [];
beforeEach(() => {
  bus = makeTempBus();
});
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.proc.kill('SIGKILL');
    await p.exited;
  }
  for (const s of sessions.splice(0)) s.kill();
  bus.cleanup();
});

function session(opts: { cwd?: string; name?: string } = {}): FakeSession {
  const s = fakeSession(bus, opts);
  sessions.push(s);
  return s;
}
const owners = new Map<SensorProc, FakeSession>();
function sensor(s: FakeSession, args: string[] = []): SensorProc {
  const p = startSensor(s.env, args, s.cwd);
  procs.push(p);
  owners.set(p, s);
  return p;
}
const OPEN = { kind: 'open' } as const;
/**
 * The sensor is up: it holds the session's claim and has written its presence. It prints
 * nothing on start (issue #11 §7), so these files, not a banner, say it is running; anything
 * written to the bus from here on is delivered (the scan after the watcher starts catches
 * what arrives while it starts).
 */
const started = (p: SensorProc) => {
  const s = owners.get(p)!;
  return waitFor(
    () => readSensor(bus.root, s.sessionId)?.pid === p.proc.pid && readPresence(bus.root).some((r) => r.id === s.sessionId && r.role === 'sensor' && r.pid === p.proc.pid),
    { what: 'the claim and the presence of the sensor' },
  );
};

describe('attend run', () => {
  it('prints nothing on start with nothing pending; the banner comes with the first message, then never again', async () => {
    const s = session({ name: 'quiet' });
    const p = sensor(s);
    await started(p);
    // The control for "nothing": a message then arrives, and it is the first thing printed.
    expect(p.stdout()).toBe('');
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'first words' });
    await waitFor(() => headerIds(p.stdout()).includes(a), { what: 'the first message' });
    const lines = p.stdout().split('\n');
    expect(lines[0]).toMatch(/^\[attend\] sensor started for quiet: watching /);
    expect(lines[1]).toMatch(new RegExp(`^\\[attend message .*id=${a}\\]$`));
    const b = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'second words' });
    await waitFor(() => headerIds(p.stdout()).includes(b), { what: 'the second message' });
    expect(p.stdout().match(/sensor (started|resumed)/g)).toHaveLength(1);
    // A restart with nothing new is silent too; the next message brings "resumed".
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    const q = sensor(s);
    await started(q);
    expect(q.stdout()).toBe('');
    const c = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'after the restart' });
    await waitFor(() => headerIds(q.stdout()).includes(c), { what: 'the message after the restart' });
    expect(q.stdout().split('\n')[0]).toMatch(/^\[attend\] sensor resumed for quiet: .*nothing already delivered is repeated$/);
    expect(headerIds(q.stdout())).toEqual([c]);
  });

  it('prints a header and a message line per message as they arrive, teaching attend reply once', async () => {
    const s = session({ name: 'alpha' });
    const p = sensor(s);
    await started(p);
    const mk = ids();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'first' });
    await waitFor(() => p.stdout().includes('first'), { what: 'first line' });
    const b = put(bus.root, mk, { scope: { kind: 'tray', key: attendKey(s.cwd) }, to: s.sessionId, body: 'to you \u001b[31m red' });
    // Each line is its own write: wait for the second message's body line, not just its header.
    await waitFor(() => headerIds(p.stdout()).length === 2 && p.stdout().includes(' red\n'), { what: 'second message' });
    const out = p.stdout();
    const seen = `stdout:\n${out}\nstderr:\n${p.stderr()}`;
    expect(headerIds(out), seen).toEqual([a, b]);
    expect(out, seen).toContain(`[attend message from_kind=human from=${ME} sig=none to=* id=${a}]\nmessage from ${ME} (human, to #open): first\n`);
    expect(out, seen).toContain(`message from ${ME} (human, to you): to you ␛[31m red`);
    expect(out.match(/attend reply/g), seen).toHaveLength(1);
    expect(readPresence(bus.root).some((r) => r.id === s.sessionId && r.role === 'sensor'), JSON.stringify(readPresence(bus.root))).toBe(true);
  });

  it('delivers a file written without an index line (another tool) and messages from writers racing each other, each once', async () => {
    const s = session({ name: 'racer' });
    const p = sensor(s, ['--trace']);
    await started(p);
    const mk = ids();
    // Hand-written: no line in .index, so only the settle look and a full listing find it.
    const foreign = mk();
    mkdirSync(pjoin(bus.root, 'signals', '_broadcast'), { recursive: true });
    writeFileSync(pjoin(bus.root, 'signals', '_broadcast', `${foreign}.signal`), `external:${ME}@pts-9|p|/p|from_kind:human|from_id:${ME}|to:*|written by hand\n`, { mode: 0o600 });
    await waitFor(() => headerIds(p.stdout()).includes(foreign), { what: 'the hand-written message' });
    // Four writer processes racing: every message arrives, none twice.
    const script = `const { writeSignal } = await import(${JSON.stringify(pjoin(process.cwd(), 'dist/tools/bus/store/messages.js'))});
      const { createIdFactory } = await import(${JSON.stringify(pjoin(process.cwd(), 'dist/tools/wire/ids.js'))});
      const mk = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });
      const out = [];
      for (let i = 0; i < 25; i++) { const id = mk(); writeSignal(process.argv[1], { kind: 'open' }, id, { from: 'external:${ME}@pts-1', project: 'p', cwd: '/p', fromKind: 'human', fromId: '${ME}', to: '*', body: 'race ' + i }); out.push(id); }
      console.log(out.join(' '));`;
    const writers = Array.from({ length: 4 }, () => spawn(process.execPath, ['--input-type=module', '-e', script, bus.root], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const written = (await Promise.all(writers.map((w) => new Promise<string>((res) => { let out = ''; w.stdout!.on('data', (d) => (out += d)); w.on('close', () => res(out)); })))).join(' ').split(/\s+/).filter(Boolean);
    expect(written).toHaveLength(100);
    await waitFor(() => written.every((id) => headerIds(p.stdout()).includes(id) || traceIds(p.stderr()).includes(id)), { what: 'all 100 raced messages', timeoutMs: 20_000 });
    const shown = [...headerIds(p.stdout()), ...traceIds(p.stderr())];
    const seen = `stdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`;
    expect(shown.filter((id) => written.includes(id)).sort(), seen).toEqual([...written].sort());
    expect(shown.filter((id) => id === foreign), seen).toHaveLength(1);
  });

  it('turns more than 8 messages in one wake into one digest line', async () => {
    const s = session();
    // Written before the sensor starts (young, so the cold-start rule delivers them in its first wake).
    const mk = ids();
    useFamilyPolicy(bus); // the digest, not permissions: these agents have no lineage
    const want = Array.from({ length: 12 }, (_, i) => put(bus.root, mk, { scope: OPEN, to: '*', body: `m${i}`, fromKind: i < 2 ? 'human' : 'agent', fromId: i < 2 ? ME : `w${i}` }));
    const p = sensor(s, ['--trace']);
    await waitFor(() => p.stdout().includes('[attend digest'), { what: 'digest' });
    expect(p.stdout()).toContain('[attend digest count=12 to_you=0 open=12 other=0 human=2 agent=10]');
    expect(headerIds(p.stdout())).toEqual([]);
    await waitFor(() => traceIds(p.stderr()).length === 12, { what: 'trace' });
    expect(traceIds(p.stderr()).sort()).toEqual(want.sort());
  });

  it('a second sensor for the session exits 0 with a message; a restart resumes without repeats', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'before restart' });
    await waitFor(() => headerIds(p.stdout()).includes(a));
    const second = sensor(s);
    expect(await second.exited).toBe(0);
    expect(second.stdout()).toMatch(/a sensor is already running for this session \(pid \d+\)/);
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    const b = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'while down' });
    const r = sensor(s);
    await waitFor(() => headerIds(r.stdout()).includes(b), { what: 'the missed message' });
    expect(r.stdout().split('\n')[0]).toMatch(/^\[attend\] sensor resumed for .*nothing already delivered is repeated$/);
    expect(headerIds(r.stdout())).toEqual([b]);
  });

  it('SIGTERM while the bus is being removed under it still ends the sensor (no orphan)', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    for (let i = 0; i < 20; i++) {
      const id = put(bus.root, ids(), { scope: OPEN, to: '*', body: `m ${i}` });
      await waitFor(() => headerIds(p.stdout()).includes(id), { what: `message ${i}` });
    }
    p.proc.kill('SIGTERM');
    // The sensor may still be writing its last state as the tree goes: retry like `rm -rf` would.
    rmSync(bus.root, { recursive: true, force: true, maxRetries: 20, retryDelay: 10 });
    const code = await Promise.race([p.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 15_000))]);
    expect(code).toBe(0);
  });

  it('applies join and leave live', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    join(bus.root, 'ops', s.sessionId);
    const chan = { kind: 'channel', name: 'ops' } as const;
    const mk = ids(() => Date.now() + 1);
    const first = put(bus.root, mk, { scope: chan, to: '#ops', body: 'on ops' });
    await waitFor(() => headerIds(p.stdout()).includes(first), { what: 'channel message', timeoutMs: 15_000 });
    // A second one arrives only if the channel's directory is now watched (the safety
    // rescan is 30 s away, past this deadline).
    const second = put(bus.root, mk, { scope: chan, to: '#ops', body: 'still on ops' });
    await waitFor(() => headerIds(p.stdout()).includes(second), { what: 'second channel message', timeoutMs: 8_000 });
    leave(bus.root, 'ops', s.sessionId);
    // After a leave the channel goes quiet while #open still arrives: every wake reads
    // membership afresh, so the wake that brings the marker already excludes #ops.
    const quiet = put(bus.root, mk, { scope: chan, to: '#ops', body: 'after leave' });
    const marker = put(bus.root, mk, { scope: OPEN, to: '*', body: 'marker' });
    await waitFor(() => headerIds(p.stdout()).includes(marker), { what: 'marker' });
    expect(headerIds(p.stdout())).not.toContain(quiet);
  });

  it('exits when its Claude process is gone, and on a closed stdout', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    s.kill();
    expect(await p.exited).toBe(0);
    expect(p.stderr()).toContain('the Claude Code session is gone');

    const s2 = session();
    const q = sensor(s2);
    await started(q);
    q.proc.stdout!.destroy();
    put(bus.root, ids(), { scope: OPEN, to: '*', body: 'into a closed pipe' });
    expect(await q.exited).toBe(0);
  });

  it('notices while idle that its stdout reader is gone (a socket), and a re-armed sensor starts', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    await waitFor(() => readSensor(bus.root, s.sessionId)?.pid === p.proc.pid, { what: 'the claim' });
    // Nothing is written to the bus: only the probe can notice the closed read end.
    p.proc.stdout!.destroy();
    expect(await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('still running'), 15_000))])).toBe(0);
    expect(readSensor(bus.root, s.sessionId)).toBeNull();
    expect(readPresence(bus.root).some((r) => r.id === s.sessionId && r.role === 'sensor')).toBe(false);
    const q = sensor(s);
    await started(q);
    expect(q.stdout()).not.toContain('already running');
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'to the re-armed sensor' });
    await waitFor(() => headerIds(q.stdout()).includes(a), { what: 'delivery by the re-armed sensor' });
  });

  it('notices while idle that its stdout reader is gone (a real FIFO)', async () => {
    const s = session();
    const fifo = pjoin(bus.dir, 'monitor.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // This process is the reader, as the Claude process is for Monitor: an ancestor.
    const rd = openSync(fifo, fsc.O_RDONLY | fsc.O_NONBLOCK);
    const wr = openSync(fifo, fsc.O_WRONLY);
    const proc = spawn(process.execPath, [BIN, 'run'], { env: s.env, cwd: s.cwd, stdio: ['ignore', wr, 'pipe'] });
    closeSync(wr);
    let err = '';
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    procs.push({ proc, stdout: () => '', stderr: () => err, exited });
    // Nothing is written to the FIFO on start: the claim says the sensor is up.
    await waitFor(() => readSensor(bus.root, s.sessionId)?.pid === proc.pid, { what: 'the claim' });
    closeSync(rd);
    expect(await Promise.race([exited, new Promise((r) => setTimeout(() => r(`still running: ${err}`), 15_000))])).toBe(0);
    expect(readSensor(bus.root, s.sessionId)).toBeNull();
  });

  it('follows /clear to the new session id, carrying the ledger', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'before clear' });
    await waitFor(() => headerIds(p.stdout()).includes(a));
    const recPath = pjoin(bus.claudeDir, 'sessions', `${s.pid}.json`);
    const rec = JSON.parse(readFileSync(recPath, 'utf8')) as Record<string, unknown>;
    const newId = '00000000-0000-4000-8000-00000000c1ea';
    writeFileSync(recPath, JSON.stringify({ ...rec, sessionId: newId }));
    await waitFor(() => p.stderr().includes(`followed /clear`), { what: 'the /clear', timeoutMs: 10_000 });
    const b = put(bus.root, ids(), { scope: { kind: 'tray', key: attendKey(s.cwd) }, to: newId, body: 'to the new id' });
    await waitFor(() => headerIds(p.stdout()).includes(b), { what: 'message to the new id' });
    expect(headerIds(p.stdout())).toEqual([a, b]);
    expect(readFileSync(pjoin(bus.root, 'state', 'ledger', newId, 'ledger.jsonl'), 'utf8')).toContain(newId);
    rmSync(recPath, { force: true });
  });

  it('polls with --poll (network filesystems)', async () => {
    const s = session();
    const p = sensor(s, ['--poll', '--interval', '200']);
    await started(p);
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'polled' });
    await waitFor(() => headerIds(p.stdout()).includes(a), { what: 'polled message' });
    expect(p.stderr()).not.toContain('falling back');
  });
});

describe('the sensor’s cost does not grow with history (issue #12 §1)', () => {
  /** Inotify watches held by a process: one `inotify wd:` line per watch in its fdinfo. */
  function inotifyWatches(pid: number): number {
    let n = 0;
    for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
      try {
        n += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length;
      } catch {
        // closed meanwhile
      }
    }
    return n;
  }

  it('watches its directories, not their files: a few watches with 2,000 messages of history', async () => {
    const s = session();
    const mk = ids(() => Date.now() - 3_600_000);
    for (let i = 0; i < 2_000; i++) put(bus.root, mk, { scope: OPEN, to: '*', body: `old ${i}` });
    const p = sensor(s);
    await started(p);
    // tray, #open and the state directory; a per-file watcher would hold over 2,000. The
    // watches are set up just after the heartbeat that `started` waits for: wait for them.
    const n = await waitFor(() => inotifyWatches(p.proc.pid!) >= 3 && inotifyWatches(p.proc.pid!), { what: 'the directory watches' });
    expect(n).toBeLessThanOrEqual(5);
    // And it still delivers.
    const id = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'new one' });
    await waitFor(() => headerIds(p.stdout()).includes(id), { what: 'the new message' });
    expect(inotifyWatches(p.proc.pid!)).toBeLessThanOrEqual(5);
  });

  it('a receive directory removed under a running sensor is recreated and watched again at once', async () => {
    const s = session();
    const p = sensor(s);
    await started(p);
    const trayDir = pjoin(bus.root, 'signals', attendKey(s.cwd));
    rmSync(trayDir, { recursive: true, force: true });
    await waitFor(() => existsSync(trayDir), { what: 'the tray to be recreated', timeoutMs: 5_000 });
    const id = put(bus.root, ids(), { scope: { kind: 'tray', key: attendKey(s.cwd) }, to: s.sessionId, body: 'after the cleanup' });
    // Well before the 30 s safety rescan.
    await waitFor(() => headerIds(p.stdout()).includes(id), { what: 'the direct message', timeoutMs: 8_000 });
  });
});
