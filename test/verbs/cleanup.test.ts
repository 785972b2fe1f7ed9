// `attend cleanup` (issue #3 §8) on a real temporary bus: project trays judged by the slug
// of their key against <claude dir>/projects/, a grace period on file age, and the things it
// must never touch.

import { existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readChannels } from '../../tools/bus/channels/membership.js';
import { withListings } from '../../tools/bus/store/listing-cache.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import { procInfoFromProc, processAlive } from '../../tools/identity/system.js';
import { attendKey, projectSlug } from '../../tools/wire/names.js';
import { type FakeSession, ME, type TempBus, fakeSession, makeTempBus, runInProcess, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
const sessions: FakeSession[] = [];

beforeEach(() => {
  bus = makeTempBus();
  mkdirSync(join(bus.claudeDir, 'projects'), { recursive: true });
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.dispose();
  bus.cleanup();
});

const HOUR = 3600_000;
const session = (opts: Parameters<typeof fakeSession>[1] = {}) => {
  const s = fakeSession(bus, opts);
  sessions.push(s);
  return s;
};
// The person: whoever runs the tests (issue 14 §6: never $USER).
const aaron = () => ({ ...bus.env });

function put(dir: string, name: string, body: string, ageMs: number): string {
  const d = join(bus.root, 'signals', dir);
  mkdirSync(d, { recursive: true });
  const f = join(d, name);
  writeFileSync(f, body);
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(f, t, t);
  return f;
}

const line = (body: string) => `external:aaron@pts-1|p|/p|from_kind:human|from_id:aaron|to:*|${body}\n`;

interface Item {
  kind: string;
  what: string;
  bytes: number;
}

async function cleanup(...args: string[]): Promise<{ items: Item[]; bytes: number; code: number; stderr: string }> {
  const r = await runInProcess(['cleanup', '--json', ...args], { env: aaron() });
  const o = JSON.parse(r.stdout || '{"items":[],"bytes":0}') as { items: Item[]; bytes: number };
  return { ...o, code: r.exitCode, stderr: r.stderr };
}

it('removes old messages of trays whose project is gone, then the tray; keeps live projects, young files and _broadcast', async () => {
  const deadKey = attendKey('/srv/dead project');
  const liveKey = attendKey('/srv/alive');
  mkdirSync(join(bus.claudeDir, 'projects', projectSlug('/srv/alive')), { recursive: true });
  const oldDead = put(deadKey, '0old-a.signal', line('old'), 2 * HOUR);
  const oldLive = put(liveKey, '0old-b.signal', line('kept: project alive'), 2 * HOUR);
  const oldOpen = put('_broadcast', '0old-c.signal', line('never swept'), 50 * HOUR);
  const youngKey = attendKey('/srv/young');
  const young = put(youngKey, '0new-d.signal', line('too young'), 60_000);

  const dry = await cleanup('--dry-run');
  expect(dry.code).toBe(0);
  expect(dry.items.map((i) => [i.kind, i.what])).toEqual([
    ['message', `signals/${deadKey}/0old-a.signal`],
    ['tray', `signals/${deadKey}/`],
  ]);
  expect(dry.items[0]?.bytes).toBe(Buffer.byteLength(line('old')));
  expect(dry.bytes).toBe(dry.items[0]?.bytes);
  // A dry run removes nothing.
  expect(existsSync(oldDead)).toBe(true);
  const text = await runInProcess(['cleanup', '--dry-run'], { env: aaron() });
  expect(text.stdout).toMatch(/would remove message\s+\d+ B\s+signals\//);
  expect(text.stdout).toContain('total (dry run): 2 items');

  const real = await cleanup();
  expect(real.items.map((i) => i.kind)).toEqual(['message', 'tray']);
  expect(existsSync(join(bus.root, 'signals', deadKey))).toBe(false);
  for (const f of [oldLive, oldOpen, young]) expect(existsSync(f)).toBe(true);
});

it("removes writers' old temporaries from signals/.tmp (an interrupted write), never a young one", async () => {
  const old = put('.tmp', '.0old.signal.123.1.tmp', 'half a line', 2 * HOUR);
  const young = put('.tmp', '.0new.signal.123.2.tmp', 'being written', 0);
  const stray = put('.tmp', 'not-a-temporary', 'someone else', 2 * HOUR);
  const r = await cleanup();
  expect(r.code, r.stderr).toBe(0);
  expect(r.items.filter((i) => i.what.startsWith('signals/.tmp/')).map((i) => [i.kind, i.what])).toEqual([['temporary', 'signals/.tmp/.0old.signal.123.1.tmp']]);
  expect(existsSync(old)).toBe(false);
  expect(existsSync(young)).toBe(true);
  expect(existsSync(stray)).toBe(true);
});

it('keeps the tray of a live session whose project folder does not exist yet', async () => {
  const s = fakeSession(bus);
  sessions.push(s);
  const f = put(attendKey(s.cwd), '0old-e.signal', line('in flight'), 2 * HOUR);
  const r = await cleanup();
  expect(r.items).toEqual([]);
  expect(existsSync(f)).toBe(true);
});

it('removes empty trays and orphan channel directories, never a channel with an entry', async () => {
  mkdirSync(join(bus.claudeDir, 'projects', projectSlug('/srv/alive')), { recursive: true });
  mkdirSync(join(bus.root, 'signals', attendKey('/srv/alive')), { recursive: true });
  await runInProcess(['channels', 'create', 'kept'], { env: aaron() });
  const keptOld = put('@kept', '0old-f.signal', line('in a live channel'), 5 * HOUR);
  const orphanOld = put('@orphan', '0old-g.signal', line('orphan'), 5 * HOUR);
  const orphanTmp = put('@orphan', '.0old-h.signal.1.1.tmp', 'half', 5 * HOUR);
  const youngOrphan = put('@young', '0new-i.signal', line('orphan but young'), 1000);
  const r = await cleanup();
  expect(r.items.map((i) => `${i.kind} ${i.what}`).sort()).toEqual(
    [
      `tray signals/${attendKey('/srv/alive')}/`,
      'message signals/@orphan/0old-g.signal',
      'temporary signals/@orphan/.0old-h.signal.1.1.tmp',
      'channel-dir signals/@orphan/',
    ].sort(),
  );
  expect(existsSync(keptOld)).toBe(true);
  expect(existsSync(orphanOld)).toBe(false);
  expect(existsSync(orphanTmp)).toBe(false);
  expect(existsSync(youngOrphan)).toBe(true);
  expect(readdirSync(join(bus.root, 'signals')).sort()).toEqual(['@kept', '@young']);
});

it('removes stale members and the empty unpinned channels they leave', async () => {
  const s = fakeSession(bus);
  await runInProcess(['join', 'ghost'], { env: s.env });
  s.kill();
  await waitFor(() => !processAlive(s.pid), { what: 'the session to exit' });
  const dry = await cleanup('--dry-run');
  expect(dry.items.map((i) => `${i.kind} ${i.what}`)).toEqual([`member #ghost ${s.sessionId}`, 'channel #ghost']);
  expect(readChannels(bus.root).channels.ghost).toBeDefined();
  await cleanup();
  expect(readChannels(bus.root).channels.ghost).toBeUndefined();
});

it('judges no tray dead when the projects folder is missing, and says so', async () => {
  const key = attendKey('/srv/whatever');
  const f = put(key, '0old-j.signal', line('x'), 5 * HOUR);
  mkdirSync(join(bus.dir, 'elsewhere'), { recursive: true });
  const r = await runInProcess(['cleanup', '--json'], { env: { ...aaron(), CLAUDE_CONFIG_DIR: join(bus.dir, 'elsewhere') } });
  expect(r.exitCode).toBe(0);
  expect(JSON.parse(r.stdout).items).toEqual([]);
  expect(r.stderr).toContain('no tray is judged dead');
  expect(existsSync(f)).toBe(true);
});

it('--all also removes old state of sessions that are gone, keeping humans and the live', async () => {
  const gone = '99999999-0000-4000-8000-000000000009';
  const stateFile = (sub: string, name: string, ageMs: number) => {
    const d = join(bus.root, 'state', sub);
    mkdirSync(d, { recursive: true });
    const f = join(d, name);
    writeFileSync(f, '{}');
    const t = (Date.now() - ageMs) / 1000;
    utimesSync(f, t, t);
    return f;
  };
  const goneSurfaced = stateFile('surfaced', `${gone}.json`, 2 * HOUR);
  const goneSensor = stateFile('presence', `${gone}~sensor.json`, 2 * HOUR);
  const humanSurfaced = stateFile('surfaced', 'aaron.json', 2 * HOUR);
  // A ledger in its own directory (the log, and the single file attend 0.4 to 0.6 wrote), and one where an attend before 0.4 kept it.
  const goneLedger = stateFile(join('ledger', gone), 'ledger.jsonl', 2 * HOUR);
  stateFile(join('ledger', gone), 'ledger.json', 2 * HOUR);
  const legacy = '99999999-0000-4000-8000-00000000000a';
  const legacyLedger = stateFile('ledger', `${legacy}.json`, 2 * HOUR);
  // Lock owner files (tools/bus/store/lock.ts): one of an ended process (this pid, another start
  // time), one of this live process, which stays.
  const deadOwner = `.owner-${process.pid}-1`;
  stateFile(join('ledger', gone), deadOwner, 2 * HOUR);
  const rootOwner = join(bus.root, deadOwner);
  writeFileSync(rootOwner, `${process.pid} 1 0`);
  utimesSync(rootOwner, (Date.now() - 2 * HOUR) / 1000, (Date.now() - 2 * HOUR) / 1000);
  const liveOwner = stateFile('', `.owner-${process.pid}-${procInfoFromProc(process.pid)?.start ?? ''}`, 2 * HOUR);
  const without = await cleanup();
  expect(without.items).toEqual([]);
  const r = await cleanup('--all');
  expect(r.items.map((i) => i.what).sort()).toEqual([deadOwner, `state/ledger/${gone}/${deadOwner}`, `state/ledger/${gone}/ledger.json`, `state/ledger/${gone}/ledger.jsonl`, `state/ledger/${legacy}.json`, `state/presence/${gone}~sensor.json`, `state/surfaced/${gone}.json`]);
  expect(existsSync(goneLedger)).toBe(false);
  expect(existsSync(dirname(goneLedger))).toBe(false);
  expect(existsSync(legacyLedger)).toBe(false);
  expect(existsSync(goneSurfaced)).toBe(false);
  expect(existsSync(goneSensor)).toBe(false);
  expect(existsSync(humanSurfaced)).toBe(true);
  expect(existsSync(rootOwner)).toBe(false);
  expect(existsSync(liveOwner)).toBe(true);
});

it("removes a dead tray's delivery index with the tray, never the index of a directory it keeps", async () => {
  const deadKey = attendKey('/srv/dead with index');
  const liveKey = attendKey('/srv/alive with index');
  mkdirSync(join(bus.claudeDir, 'projects', projectSlug('/srv/alive with index')), { recursive: true });
  put(deadKey, '0old-a.signal', line('old'), 2 * HOUR);
  put(deadKey, '.index', '0old-a - 1\n', 2 * HOUR);
  const liveIndex = put(liveKey, '.index', '0old-b - 1\n', 2 * HOUR);
  put(liveKey, '0old-b.signal', line('kept'), 2 * HOUR);
  // Listing caches of both (tools/bus/store/listing.ts): the dead tray's goes with it.
  for (const key of [deadKey, liveKey]) withListings(bus.root, [{ kind: 'tray', key }], { now: Date.now(), reporter: silentReporter }, () => {});
  expect(existsSync(join(bus.root, 'cache', 'listing', deadKey))).toBe(true);
  const real = await cleanup();
  expect(real.items.map((i) => [i.kind, i.what])).toEqual([
    ['message', `signals/${deadKey}/0old-a.signal`],
    ['temporary', `signals/${deadKey}/.index`],
    ['tray', `signals/${deadKey}/`],
  ]);
  expect(existsSync(join(bus.root, 'signals', deadKey))).toBe(false);
  expect(existsSync(liveIndex)).toBe(true);
  expect(existsSync(join(bus.root, 'cache', 'listing', deadKey))).toBe(false);
  expect(existsSync(join(bus.root, 'cache', 'listing', liveKey))).toBe(true);
});

it('never reaps a message imported from another machine by local project liveness (issue 13)', async () => {
  const remoteKey = attendKey('/srv/on-the-other-box');
  const imported = put(remoteKey, '0imp-a.signal', line('from the box'), 5 * HOUR);
  const local = put(remoteKey, '0loc-b.signal', line('written here'), 5 * HOUR);
  const chan = put('@remote-only', '0imp-c.signal', line('a channel this machine has no entry for'), 5 * HOUR);
  mkdirSync(join(bus.root, 'relay'), { recursive: true });
  writeFileSync(join(bus.root, 'relay', 'imported.log'), `${remoteKey} 0imp-a\n@remote-only 0imp-c\n`);
  const r = await cleanup();
  expect(r.code).toBe(0);
  expect(r.items.map((i) => i.what)).toEqual([`signals/${remoteKey}/0loc-b.signal`]);
  expect(existsSync(imported)).toBe(true);
  expect(existsSync(chan)).toBe(true);
  expect(existsSync(local)).toBe(false);
});

describe('cleanup --older-than (retention, issue #12 §7; issue 21 §4 in test/verbs/retention.test.ts)', () => {
  it('removes old messages everywhere except what a live reader has not been shown, says so in a dry run first, and compacts the index', async () => {
    const { writeSignal } = await import('../../tools/bus/store/messages.js');
    const { createIdFactory } = await import('../../tools/wire/ids.js');
    const { signalsIn } = await import('../helpers/signals.js');
    const reader = session({ name: 'reader' });
    const env = (body: string) => ({ from: `external:${ME}@pts`, project: 'p', cwd: '/p', fromKind: 'human' as const, fromId: ME, to: '*', body });
    const old = createIdFactory({ now: () => Date.now() - 100 * 86_400_000, pid: 7, random: Math.random });
    // Five old messages the reader was shown long ago, one it never was: its ledger says so
    // (a watermark from before them, the five in its consumed set).
    const shown = Array.from({ length: 5 }, (_, i) => {
      const id = old();
      writeSignal(bus.root, { kind: 'open' }, id, env(`seen ${i}`));
      return id;
    });
    const late = old();
    writeSignal(bus.root, { kind: 'open' }, late, env('never shown'));
    const { ledgerFile } = await import('../../tools/bus/delivery/ledger-log.js');
    const { idFloor } = await import('../../tools/wire/ids.js');
    mkdirSync(dirname(ledgerFile(bus.root, reader.sessionId)), { recursive: true });
    writeFileSync(
      ledgerFile(bus.root, reader.sessionId),
      JSON.stringify({ version: 1, sid: reader.sessionId, created: 0, updated: 0, marks: { _broadcast: idFloor(Date.now() - 101 * 86_400_000), [attendKey(reader.cwd)]: idFloor(Date.now()) }, above: shown, taught: true, drainRounds: 0, index: {} }),
    );
    const fresh = createIdFactory({ now: Date.now, pid: 8, random: Math.random })();
    writeSignal(bus.root, { kind: 'open' }, fresh, env('recent'));
    const dry = JSON.parse((await runInProcess(['cleanup', '--older-than', '90d', '--dry-run', '--json'], { env: bus.env })).stdout) as { retention: { messages: number; kept: number; heldBy: string[] } };
    expect(dry.retention).toMatchObject({ messages: 5, kept: 1, heldBy: [reader.sessionId] });
    expect(signalsIn(bus.root, '_broadcast')).toHaveLength(7);
    const r = await runInProcess(['cleanup', '--older-than', '90d'], { env: bus.env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('removed messages');
    expect(r.stdout).toContain('kept 1 older message not every party it was for has been shown (--force removes it):');
    expect(r.stdout).toContain('reader: 1 in #open (not shown yet)');
    expect(signalsIn(bus.root, '_broadcast').map((s) => s.id).sort()).toEqual([late, fresh].sort());
    // The index keeps only lines of messages still there, and the reader still gets the late one.
    const index = readFileSync(join(bus.root, 'signals', '_broadcast', '.index'), 'utf8').trim().split('\n').map((l) => l.split(' ')[0]);
    expect(index.sort()).toEqual([late, fresh].sort());
    expect((await runInProcess(['inbox', '--drain', '--format', 'plain'], { env: reader.env })).stdout).toMatch(/2 peer messages delivered/);
    void shown;
  });

  it('refuses a duration it cannot read', async () => {
    const r = await runInProcess(['cleanup', '--older-than', 'ninety days'], { env: bus.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--older-than takes a duration like 90d');
  });
});
