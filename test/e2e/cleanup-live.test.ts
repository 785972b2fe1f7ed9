// Issue #10 item 3: `attend cleanup` while a session runs. Cleanup never removes what a live
// session or its sensor uses (its tray, even empty), and a sensor whose watched directory
// vanished recreates and rewatches it at once instead of waiting for the 30 s rescan.
// Real processes: the built `attend run` as the sensor, `attend cleanup` and `attend send`.

import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attendKey, projectSlug } from '../../tools/wire/names.js';
import { type FakeSession, type TempBus, fakeSession, makeTempBus, runBin, waitFor } from '../helpers/bus.js';
import { type SensorProc, headerIds, startSensor } from '../helpers/delivery.js';

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

// Well under the sensor's 30 s safety rescan (HEARTBEAT_MS): only a rewatch can meet it.
const PROMPT_MS = 10_000;

async function liveSensor(): Promise<{ s: FakeSession; p: SensorProc; tray: string }> {
  const s = fakeSession(bus, { name: 'api', cwd: join(bus.dir, 'work', 'api') });
  sessions.push(s);
  // Claude Code has made the project folder: the project is alive, the tray is judged as such.
  mkdirSync(join(bus.claudeDir, 'projects', projectSlug(s.cwd)), { recursive: true });
  const p = startSensor(s.env, [], s.cwd);
  procs.push(p);
  // Watching for certain: a first direct message has been seen (the sensor prints nothing
  // before its first message; the scan after its watcher starts catches one sent meanwhile).
  const warm = runBin(['send', '--to', 'api', 'warm-up'], { env: bus.env, cwd: bus.home });
  expect(warm.exitCode, warm.stderr).toBe(0);
  await waitFor(() => headerIds(p.stdout()).includes(warm.stdout.trim()), { what: 'the warm-up message' });
  const tray = join(bus.root, 'signals', attendKey(s.cwd));
  expect(existsSync(tray)).toBe(true);
  return { s, p, tray };
}

const asHuman = (args: string[]) => runBin(args, { env: bus.env, cwd: bus.home });

describe('cleanup while a session runs', () => {
  it('keeps a live session\'s empty tray; a direct message then arrives at once', async () => {
    const { p, tray } = await liveSensor();
    // Empty again, as a tray is between conversations (the index hint is attend's own).
    for (const f of readdirSync(tray)) rmSync(join(tray, f));
    const born = statSync(tray, { bigint: true }).birthtimeNs;
    const dry = asHuman(['cleanup', '--dry-run', '--json']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { items: { what: string }[] }).items.map((i) => i.what)).not.toContain(`signals/${attendKey(join(bus.dir, 'work', 'api'))}/`);
    const r = asHuman(['cleanup']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(tray)).toBe(true);
    expect(statSync(tray, { bigint: true }).birthtimeNs).toBe(born);
    const sent = asHuman(['send', '--to', 'api', 'after cleanup']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    await waitFor(() => headerIds(p.stdout()).includes(sent.stdout.trim()), { what: 'the direct message', timeoutMs: PROMPT_MS });
  });

  it('a sensor whose tray was removed recreates it and rewatches it at once', async () => {
    const { p, tray } = await liveSensor();
    rmSync(tray, { recursive: true });
    await waitFor(() => existsSync(tray), { what: 'the tray recreated by the sensor', timeoutMs: PROMPT_MS });
    const sent = asHuman(['send', '--to', 'api', 'into the new tray']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    await waitFor(() => headerIds(p.stdout()).includes(sent.stdout.trim()), { what: 'the direct message', timeoutMs: PROMPT_MS });
  });

  it('a tray replaced behind the sensor\'s back (removed, then recreated by the next send) is rewatched too', async () => {
    const { p, tray } = await liveSensor();
    rmSync(tray, { recursive: true });
    // The writer makes the directory again before the sensor notices (or races it).
    const sent = asHuman(['send', '--to', 'api', 'racing the rewatch']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    await waitFor(() => headerIds(p.stdout()).includes(sent.stdout.trim()), { what: 'the direct message', timeoutMs: PROMPT_MS });
    // And later messages too, through the new watch.
    const again = asHuman(['send', '--to', 'api', 'and another']);
    await waitFor(() => headerIds(p.stdout()).includes(again.stdout.trim()), { what: 'the second message', timeoutMs: PROMPT_MS });
  });
});
