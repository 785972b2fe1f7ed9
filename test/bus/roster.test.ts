// Liveness, ordinals, /clear, peers and status (issue #3 §4–§7) on a real temporary bus with
// real processes standing in for Claude Code sessions.

import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readChannels } from '../../tools/bus/channels/membership.js';
import { readOwed, writeOwed } from '../../tools/bus/delivery/owed.js';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { observeSession } from '../../tools/bus/presence/registry.js';
import { processAlive } from '../../tools/identity/system.js';
import { parseSignal } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { type FakeSession, type TempBus, ME, liveTask, procStart, runInProcess, waitFor, useTempBus } from '../helpers/temp-bus.js';
import { ids, put, PERSON } from '../helpers/fixtures.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));


async function end(s: FakeSession): Promise<void> {
  s.kill();
  await waitFor(() => !processAlive(s.pid), { what: `pid ${s.pid} to exit` });
}

interface PeerJson {
  id: string;
  name: string;
  kind: string;
  origin: string;
  status: string | null;
  sessionName: string | null;
  channels: string[];
  lastSeen: number;
  delivering: boolean;
  reach: { word: string; by?: string; since?: number | null };
}

async function peers(env: Record<string, string>): Promise<PeerJson[]> {
  const r = await runInProcess(['peers', '--json'], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { peers: PeerJson[] }).peers;
}

// The person: whoever runs the tests (issue 14 §6: never $USER).
const human = () => ({ ...bus.env });
const nameOf = (list: PeerJson[], id: string) => list.find((p) => p.id === id)?.name;

describe('names given once (docs/architecture.md, "Names")', () => {
  it('calls a session by its project, a second at one origin by the next suffix, and never renames the first', async () => {
    const cwd = join(bus.dir, 'work', 'shared');
    const a = session({ cwd });
    let list = await peers(human());
    expect(nameOf(list, a.sessionId)).toBe('claude-shared');
    const b = session({ cwd });
    const other = session({ cwd: join(bus.dir, 'work', 'My Web') });
    list = await peers(human());
    // The second arrival takes the suffix; the first keeps the name it had.
    expect(nameOf(list, a.sessionId)).toBe('claude-shared');
    expect(nameOf(list, b.sessionId)).toBe('claude-shared-2');
    expect(nameOf(list, other.sessionId)).toBe('claude-my-web');

    await end(a);
    list = await peers(human());
    expect(nameOf(list, b.sessionId)).toBe('claude-shared-2');
    // The name of one that just ended is not handed to a newcomer while it may still be meant.
    const c = session({ cwd });
    list = await peers(human());
    expect(nameOf(list, c.sessionId)).toBe('claude-shared-3');
    expect(nameOf(list, b.sessionId)).toBe('claude-shared-2');
  });

  it('--to the first name reaches the first alone: the shared tray holds it with to:<first>, the second does not list it', async () => {
    const cwd = join(bus.dir, 'work', 'pair');
    const a = session({ cwd });
    await peers(human());
    const b = session({ cwd });
    await peers(human());
    const sent = await runInProcess(['send', '--to', 'claude-pair', '--json', 'only for the first'], { env: human() });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const id = JSON.parse(sent.stdout).id as string;
    const tray = attendKey(cwd);
    const line = parseSignal(readFileSync(join(bus.root, 'signals', tray, `${id}.signal`), 'utf8').trimEnd());
    expect(line?.to).toBe(a.sessionId);
    const inboxIds = async (s: FakeSession) =>
      (JSON.parse((await runInProcess(['inbox', '--json'], { env: s.env })).stdout) as { messages: { id: string }[] }).messages.map((m) => m.id);
    expect(await inboxIds(a)).toContain(id);
    expect(await inboxIds(b)).not.toContain(id);
    // The session id addresses it as well.
    const byId = await runInProcess(['send', '--to', a.sessionId, '--json', 'again'], { env: human() });
    expect(JSON.parse(byId.stdout).to).toBe(a.sessionId);
  });
});

describe('/clear', () => {
  it('follows the process to its new session id: same name, same ordinal, same memberships; the sensor hears the old id once', async () => {
    const cwd = join(bus.dir, 'work', 'clear');
    const a = session({ cwd });
    const b = session({ cwd });
    expect((await runInProcess(['join', 'ops'], { env: b.env })).exitCode).toBe(0);
    writeOwed(bus.root, b.sessionId, { channel: 'ops', ids: ['x1'], olderCount: 0 });
    const before = nameOf(await peers(human()), b.sessionId);
    expect(before).toBe('claude-clear-2');

    // Claude Code rewrites the record: same pid and start time, new session id.
    const newId = '11111111-2222-4333-8444-555555555555';
    const recFile = join(bus.claudeDir, 'sessions', `${b.pid}.json`);
    const rec = JSON.parse(readFileSync(recFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(recFile, JSON.stringify({ ...rec, sessionId: newId }));

    const list = await peers(human());
    expect(nameOf(list, newId)).toBe(before);
    expect(list.find((p) => p.id === b.sessionId)).toBeUndefined();
    const ops = readChannels(bus.root).channels.ops;
    expect(Object.keys(ops?.members ?? {})).toEqual([newId]);
    expect(readOwed(bus.root, newId).map((o) => o.ids)).toEqual([['x1']]);
    expect(readOwed(bus.root, b.sessionId)).toEqual([]);
    // The roster moved it first; the sensor's observeSession still gets the old id, once.
    const seen = observeSession(bus.root, { pid: b.pid, procStart: procStart(b.pid), sessionId: newId, origin: cwd });
    expect(seen).toEqual({ ordinalIndex: 1, previousSessionId: b.sessionId });
    expect(observeSession(bus.root, { pid: b.pid, procStart: procStart(b.pid), sessionId: newId, origin: cwd })).toEqual({ ordinalIndex: 1 });
    void a;
  });

  it('observeSession alone detects a /clear and returns the previous id', () => {
    const s = { pid: process.pid, procStart: procStart(process.pid), origin: '/srv/x' };
    expect(observeSession(bus.root, { ...s, sessionId: 'aaaaaaaa-0000-4000-8000-000000000001' })).toEqual({ ordinalIndex: null });
    expect(observeSession(bus.root, { ...s, sessionId: 'aaaaaaaa-0000-4000-8000-000000000002' })).toEqual({
      ordinalIndex: null,
      previousSessionId: 'aaaaaaaa-0000-4000-8000-000000000001',
    });
  });
});

describe('liveness and pruning', () => {
  it('prunes dead members and removes the empty unpinned channels they leave; humans and pinned channels stay', async () => {
    const a = session();
    const b = session();
    await runInProcess(['join', 'solo'], { env: a.env });
    await runInProcess(['join', 'keep', '--pin'], { env: a.env });
    await runInProcess(['join', 'mixed'], { env: a.env });
    await runInProcess(['join', 'mixed'], { env: b.env });
    await runInProcess(['join', 'mixed'], { env: human() });
    await end(a);
    const r = await runInProcess(['channels', '--json'], { env: b.env });
    expect(r.exitCode).toBe(0);
    const store = readChannels(bus.root);
    expect(store.channels.solo).toBeUndefined();
    expect(store.channels.keep?.members).toEqual({});
    expect(Object.keys(store.channels.mixed?.members ?? {}).sort()).toEqual([b.sessionId, ME].sort());
  });

  it('a fresh attend heartbeat makes a peer live without a Claude Code record; a stale one does not', async () => {
    writePresence(bus.root, { id: 'hana', kind: 'human', origin: '/home/hana', heartbeat: Date.now(), role: 'chat' });
    writePresence(bus.root, { id: 'gone', kind: 'human', origin: '/home/gone', heartbeat: Date.now() - 91_000, role: 'chat' });
    const list = await peers(human());
    expect(list.map((p) => p.id)).toEqual(['hana']);
    expect(list[0]).toMatchObject({ kind: 'human', delivering: true, reach: { word: 'shown', by: 'chat' } });
  });

  it('a fresh heartbeat whose process has died (a crash, a SIGKILL) keeps nobody live', async () => {
    // A task that ran and ended: its id names no live process.
    const ended = liveTask();
    ended.end();
    const dead = ended.tid;
    writePresence(bus.root, { id: 'crashed', kind: 'human', origin: '/home/crashed', heartbeat: Date.now(), role: 'chat', pid: dead });
    writePresence(bus.root, { id: 'running', kind: 'human', origin: '/home/running', heartbeat: Date.now(), role: 'chat', pid: process.pid });
    const list = await peers(human());
    expect(list.map((p) => p.id)).toEqual(['running']);
  });
});

describe('peers and status', () => {
  it('peers shows name, origin, Claude Code status and name, channels, last seen, and how a message reaches each (issue 21 item 7)', async () => {
    const named = session({ name: 'work-6d', status: 'busy' });
    const sensed = session();
    const drained = session();
    const stale = session();
    const fresh = session();
    await runInProcess(['join', 'ops'], { env: named.env });
    const now = Date.now();
    writePresence(bus.root, { id: sensed.sessionId, kind: 'agent', origin: sensed.cwd, heartbeat: now, role: 'sensor', pid: sensed.pid });
    writePresence(bus.root, { id: drained.sessionId, kind: 'agent', origin: drained.cwd, heartbeat: now - 5 * 60_000, role: 'drain' });
    writePresence(bus.root, { id: stale.sessionId, kind: 'agent', origin: stale.cwd, heartbeat: now - 11 * 60_000, role: 'drain' });
    // A fresh session whose SessionStart hook ran and that has not ended a turn yet: its Stop hook delivers.
    writePresence(bus.root, { id: fresh.sessionId, kind: 'agent', origin: fresh.cwd, heartbeat: now - 5 * 60_000, role: 'session', pid: fresh.pid });
    const list = await peers(human());
    const by = (id: string) => list.find((p) => p.id === id) as PeerJson;
    expect(by(named.sessionId)).toMatchObject({ name: 'work-6d', sessionName: 'work-6d', status: 'busy', origin: named.cwd, channels: ['#open', '#ops'], delivering: false, reach: { word: 'waiting' } });
    expect(by(sensed.sessionId)).toMatchObject({ status: 'idle', sessionName: null, delivering: true, reach: { word: 'shown', by: 'sensor' } });
    expect(by(drained.sessionId)).toMatchObject({ delivering: true, reach: { word: 'next-turn' } });
    // A live session that has drained before keeps its Stop hook, however long ago its last turn was.
    expect(by(stale.sessionId)).toMatchObject({ delivering: true, reach: { word: 'next-turn' } });
    expect(by(fresh.sessionId)).toMatchObject({ delivering: true, reach: { word: 'next-turn' } });
    expect(typeof by(named.sessionId).lastSeen).toBe('number');
    const text = await runInProcess(['peers'], { env: human() });
    expect(text.stdout).toContain('work-6d');
    expect(text.stdout).not.toContain('DEAF');
    expect(text.stdout).toContain('shown (sensor)');
    expect(text.stdout).toContain('next turn');
    expect(text.stdout).toContain('waiting');
  });

  it('peers renders hostile session names as data', async () => {
    session({ name: 'evil\u001b[2J\u001b]0;pwn\u0007' });
    const text = await runInProcess(['peers'], { env: human() });
    expect(text.stdout).not.toContain('\u001b');
    expect(text.stdout).toContain('evil␛[2J');
  });

  it('status reports the root, per-scope counts, unread as the next wake would deliver it, channels and delivery', async () => {
    const a = session();
    const b = session();
    await runInProcess(['join', 'ops'], { env: a.env });
    await runInProcess(['join', 'ops'], { env: b.env });
    await runInProcess(['send', '--channel', 'ops', 'one'], { env: b.env });
    await runInProcess(['send', 'to everyone'], { env: b.env });
    await runInProcess(['send', '--to', a.sessionId, 'direct'], { env: b.env });
    const r = await runInProcess(['status', '--json'], { env: a.env });
    expect(r.exitCode, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as {
      busRoot: string;
      me: { id: string };
      scopes: { dir: string; messages: number; mine: boolean }[];
      inbox: { total: number; unread: number };
      channels: string[];
      delivery: unknown;
    };
    expect(s.busRoot).toBe(bus.root);
    expect(s.me.id).toBe(a.sessionId);
    expect(s.inbox).toEqual({ total: 3, unread: 3 });
    expect(s.channels).toEqual(['#ops']);
    expect(s.delivery).toMatchObject({ sensorRunning: false, ledger: { state: 'missing' } });
    const counts = Object.fromEntries(s.scopes.map((x) => [x.dir, [x.messages, x.mine]]));
    expect(counts).toEqual({ '_broadcast': [1, true], '@ops': [1, true], [attendKey(a.cwd)]: [1, true] });
    // Unread is what the next wake delivers: listing the inbox consumes nothing, a drain does.
    await runInProcess(['inbox'], { env: a.env });
    const status = async () => JSON.parse((await runInProcess(['status', '--json'], { env: a.env })).stdout) as { inbox: { unread: number }; delivery: { ledger: { state: string } } };
    expect((await status()).inbox.unread).toBe(3);
    const drained = await runInProcess(['inbox', '--drain', '--format', 'plain'], { env: a.env });
    expect(drained.stdout).toMatch(/^\[attend\] 3 peer messages delivered/);
    const after = await status();
    expect(after.inbox.unread).toBe(0);
    expect(after.delivery.ledger.state).toBe('ok');
    await runInProcess(['send', '--to', a.sessionId, 'one more'], { env: b.env });
    expect((await status()).inbox.unread).toBe(1);
    expect((await runInProcess(['status'], { env: a.env })).stdout).toContain('sensor:   not running');
    expect(readdirSync(join(bus.root, 'signals')).filter((n) => n !== '.tmp').sort()).toEqual(['@ops', '_broadcast', attendKey(a.cwd)].sort());
  });

  it('status of a session with no ledger yet counts what its first wake delivers, from the listings: recent #open and channel messages, a hand-written one too, not the old history', async () => {
    const a = session();
    await runInProcess(['join', 'ops'], { env: a.env });
    const old = ids(() => Date.now() - 3_600_000);
    for (let i = 0; i < 30; i++) put(bus.root, old, { scope: { kind: 'open' }, to: '*', body: `old ${i}` });
    put(bus.root, old, { scope: { kind: 'channel', name: 'ops' }, to: '#ops', body: 'old in ops' });
    const now = ids();
    put(bus.root, now, { scope: { kind: 'open' }, to: '*', body: 'recent' });
    put(bus.root, now, { scope: { kind: 'channel', name: 'ops' }, to: '#ops', body: 'recent in ops' });
    // Written without attend (no index line), a moment ago.
    writeFileSync(join(bus.root, 'signals', '_broadcast', `${now()}.signal`), `external:${PERSON}@pts-1|p|/p|from_kind:human|from_id:${PERSON}|to:*|by hand\n`, { mode: 0o600 });
    const status = async () => JSON.parse((await runInProcess(['status', '--json'], { env: a.env })).stdout) as { inbox: { total: number; unread: number }; delivery: { ledger: { state: string } } };
    const before = await status();
    expect(before.delivery.ledger.state).toBe('missing');
    expect(before.inbox.total).toBe(34);
    expect(before.inbox.unread).toBe(3);
    const drained = await runInProcess(['inbox', '--drain', '--format', 'plain'], { env: a.env });
    expect(drained.stdout).toMatch(/^\[attend\] 3 peer messages delivered/);
    expect(drained.stdout).toContain('31 earlier messages not shown');
    // The recent #open message and the hand-written one, each collapsed.
    expect(drained.stdout.split(`[1 message, ${PERSON}, #open`)).toHaveLength(3);
    expect((await status()).inbox.unread).toBe(0);
  });
});
