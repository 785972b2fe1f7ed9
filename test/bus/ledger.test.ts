import { appendFileSync, existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join as pjoin } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moveLedger, readLedger } from '../../tools/bus/delivery/ledger.js';
import { ledgerFile } from '../../tools/bus/delivery/ledger-log.js';
import { takePending } from '../../tools/bus/delivery/take.js';
import { claimSensor, deliveryStatus, releaseSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { withListings } from '../../tools/bus/store/listing-cache.js';
import { createReporter } from '../../tools/bus/store/messages.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { agent, ids, join, put, PERSON } from '../helpers/fixtures.js';
import { ORIGIN, OPEN, TRAY, ledgerNow as ledgerOf, take as takeFrom } from '../helpers/ledger.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const take = (who?: Identity, consumeAll?: boolean, now?: number) => takeFrom(bus.root, who, consumeAll, now);
const ledgerNow = () => ledgerOf(bus.root);

describe('consumption ledger', () => {
  it('cold start: addressed mail of any age, #open younger than 120 s, the rest counted once', () => {
    const old = ids(() => Date.now() - 3_600_000);
    for (let i = 0; i < 5; i++) put(bus.root, old, { scope: OPEN, to: '*', body: `old ${i}` });
    const oldDirect = put(bus.root, old, { scope: TRAY, to: 'sid-a', body: 'old but for you' });
    put(bus.root, old, { scope: TRAY, to: 'sid-sibling', body: 'for a sibling' });
    const young = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'young' });
    const first = take();
    expect(first.pending.cold).toBe(true);
    expect(first.pending.fresh.map((m) => m.id).sort()).toEqual([oldDirect, young].sort());
    expect(first.pending.hidden).toBe(5);
    const second = take();
    expect(second.pending.cold).toBe(false);
    expect(second.pending.fresh).toEqual([]);
    expect(second.pending.hidden).toBe(0);
  });

  it('surfaces each message once, and what deliver did not consume stays pending', () => {
    take();
    const mk = ids();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'a' });
    const b = put(bus.root, mk, { scope: TRAY, to: 'sid-a', body: 'b' });
    expect(take(undefined, false).pending.fresh.map((m) => m.id)).toEqual([a, b]);
    expect(take().pending.fresh.map((m) => m.id)).toEqual([a, b]);
    expect(take().pending.fresh).toEqual([]);
  });

  it('skips own messages, a sibling\'s tray mail, malformed files and files removed mid-scan', () => {
    take();
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', fromKind: 'agent', fromId: 'sid-a', body: 'mine' });
    put(bus.root, mk, { scope: TRAY, to: 'sid-sibling', body: 'theirs' });
    const bad = pjoin(scopeDir(bus.root, OPEN), `${mk()}.signal`);
    writeFileSync(bad, 'not a signal line');
    const good = put(bus.root, mk, { scope: OPEN, to: '*', body: 'good' });
    const r = take();
    expect(r.pending.fresh.map((m) => m.id)).toEqual([good]);
    expect(r.skipped.join('\n')).toContain('not a signal line');
    expect(take().skipped).toEqual([]);
  });

  it('a truncated or garbage ledger is rebuilt with a warning under the cold-start rule, not a flood', () => {
    const old = ids(() => Date.now() - 3_600_000);
    for (let i = 0; i < 30; i++) put(bus.root, old, { scope: OPEN, to: '*', body: `old ${i}` });
    take();
    const file = ledgerFile(bus.root, 'sid-a');
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 20));
    const r = take();
    expect(r.warnings.join('\n')).toMatch(/not valid; moved it to .* and rebuilt it/);
    expect(r.pending.cold).toBe(true);
    expect(r.pending.fresh).toEqual([]);
    writeFileSync(file, '\u0000\u0001garbage');
    expect(take().pending.fresh).toEqual([]);
    expect(take().warnings).toEqual([]);
  });

  it('reads a ledger where an attend before 0.4 kept it, and moves it into the session\'s own directory', () => {
    take();
    const mk = ids();
    const seen = put(bus.root, mk, { scope: OPEN, to: '*', body: 'seen before the upgrade' });
    expect(take().pending.fresh.map((m) => m.id)).toEqual([seen]);
    // Put the ledger back where the old layout had it.
    const legacy = pjoin(bus.root, 'state', 'ledger', 'sid-a.json');
    writeFileSync(legacy, JSON.stringify(ledgerNow()));
    unlinkSync(ledgerFile(bus.root, 'sid-a'));
    const next = put(bus.root, mk, { scope: OPEN, to: '*', body: 'after the upgrade' });
    const r = take();
    expect(r.pending.cold).toBe(false);
    expect(r.pending.fresh.map((m) => m.id)).toEqual([next]);
    expect(existsSync(legacy)).toBe(false);
    expect(existsSync(ledgerFile(bus.root, 'sid-a'))).toBe(true);
  });

  it('a cold start takes #open from its listing cache when the index brings it up to date, and plans exactly what a full listing would', () => {
    const old = ids(() => Date.now() - 3_600_000);
    for (let i = 0; i < 40; i++) put(bus.root, old, { scope: OPEN, to: '*', body: `old ${i}` });
    const mk = ids();
    const recent = [put(bus.root, mk, { scope: OPEN, to: '*', body: 'recent' })];
    const byHand = mk();
    writeFileSync(pjoin(scopeDir(bus.root, OPEN), `${byHand}.signal`), `external:${PERSON}@pts-1|p|/p|from_kind:human|from_id:${PERSON}|to:*|by hand\n`, { mode: 0o600 });
    recent.push(byHand);
    // Without a cache: the directory is walked.
    const walked = take(agent('sid-walk', ORIGIN));
    expect(existsSync(pjoin(bus.root, 'cache', 'listing', '_broadcast'))).toBe(false);
    // A listing (attend inbox, status, the chat) made the cache; a later write is indexed.
    withListings(bus.root, [OPEN], { now: Date.now(), reporter: createReporter(() => {}) }, () => {});
    recent.push(put(bus.root, mk, { scope: OPEN, to: '*', body: 'after the listing' }));
    const at = Date.now() + 1_000;
    const cached = take(agent('sid-cache', ORIGIN), true, at);
    expect(walked.pending.fresh.map((m) => m.id).sort()).toEqual(recent.slice(0, 2).sort());
    expect(cached.pending.fresh.map((m) => m.id).sort()).toEqual([...recent].sort());
    expect(cached.pending.hidden).toBe(40);
    expect(walked.pending.hidden).toBe(40);
    // It came from the cache: the state recorded is the cache's, whose last full listing was
    // before this cycle (a walk records the cycle's own time), and it stands for a full
    // listing (the "missed file" marks are set). The next cycle reads the index on from it.
    const st = (readLedger(bus.root, 'sid-cache') as { ledger: { index: Record<string, { lmark?: string; listed: number }> } }).ledger.index['_broadcast']!;
    expect(st.listed).toBeLessThan(at);
    expect(st.lmark).toBeDefined();
    const next = put(bus.root, mk, { scope: OPEN, to: '*', body: 'next' });
    expect(take(agent('sid-cache', ORIGIN)).pending.fresh.map((m) => m.id)).toEqual([next]);
  });

  it('a cold start lists the directory when its listing cache cannot be brought up to date from the index', () => {
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'indexed' });
    withListings(bus.root, [OPEN], { now: Date.now(), reporter: createReporter(() => {}) }, () => {});
    // A file without an index line, settled: the cache cannot explain the directory any more.
    const byHand = mk();
    writeFileSync(pjoin(scopeDir(bus.root, OPEN), `${byHand}.signal`), `external:${PERSON}@pts-1|p|/p|from_kind:human|from_id:${PERSON}|to:*|by hand\n`, { mode: 0o600 });
    const r = take(agent('sid-late', ORIGIN), true, Date.now() + 200);
    expect(r.pending.fresh.map((m) => m.body)).toEqual(expect.arrayContaining(['indexed', 'by hand']));
  });

  it("reads the single-file ledger of attend 0.4 to 0.6 and carries on in the log", () => {
    take();
    const mk = ids();
    const seen = put(bus.root, mk, { scope: OPEN, to: '*', body: 'seen before the upgrade' });
    expect(take().pending.fresh.map((m) => m.id)).toEqual([seen]);
    const plain = pjoin(dirname(ledgerFile(bus.root, 'sid-a')), 'ledger.json');
    writeFileSync(plain, JSON.stringify(ledgerNow()));
    unlinkSync(ledgerFile(bus.root, 'sid-a'));
    const next = put(bus.root, mk, { scope: OPEN, to: '*', body: 'after the upgrade' });
    expect(take().pending.fresh.map((m) => m.id)).toEqual([next]);
    expect(existsSync(plain)).toBe(false);
    expect(ledgerNow().above).toContain(next);
  });

  it('an append a crash cut short is passed over: the line before it counts, and the next append reads whole', () => {
    take();
    const mk = ids();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'a' });
    expect(take().pending.fresh.map((m) => m.id)).toEqual([a]);
    const file = ledgerFile(bus.root, 'sid-a');
    appendFileSync(file, '\n{"version":1,"sid":"sid-a","cre');
    expect(ledgerNow().above).toContain(a);
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'b' });
    const r = take();
    expect(r.warnings).toEqual([]);
    expect(r.pending.fresh.map((m) => m.id)).toEqual([b]);
    expect(ledgerNow().above).toEqual(expect.arrayContaining([a, b]));
  });

  it("what another process appended is what the next cycle here starts from (this process's copy is not trusted past a change)", () => {
    take();
    const mk = ids();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'shown by the other conduit' });
    // Another conduit (the drain, say) consumed it and appended its ledger.
    const other = { ...ledgerNow(), above: [...ledgerNow().above, a], taught: true };
    appendFileSync(ledgerFile(bus.root, 'sid-a'), `\n${JSON.stringify(other)}\n`);
    expect(take().pending.fresh).toEqual([]);
    expect(ledgerNow().taught).toBe(true);
  });

  it('a channel joined later delivers from the join on, and applies without restart', () => {
    const who = agent('sid-a', ORIGIN);
    take(who);
    const chan = { kind: 'channel', name: 'ops' } as const;
    put(bus.root, ids(() => Date.now() - 10_000), { scope: chan, to: '#ops', body: 'before join' });
    join(bus.root, 'ops', 'sid-a');
    const after = put(bus.root, ids(() => Date.now() + 5), { scope: chan, to: '#ops', body: 'after join' });
    expect(take(who).pending.fresh.map((m) => m.id)).toEqual([after]);
  });

  it('moves the ledger to a new session id after /clear, so nothing repeats', () => {
    take();
    put(bus.root, ids(), { scope: OPEN, to: '*', body: 'seen before clear' });
    take();
    expect(moveLedger(bus.root, 'sid-a', 'sid-a2')).toBe(true);
    const r = take(agent('sid-a2', ORIGIN));
    expect(r.pending.cold).toBe(false);
    expect(r.pending.fresh).toEqual([]);
    expect(deliveryStatus(bus.root, 'sid-a').ledger.state).toBe('missing');
    expect(deliveryStatus(bus.root, 'sid-a2').ledger.state).toBe('ok');
    // The old id's directory goes, this process's lock owner file in it too.
    expect(existsSync(dirname(ledgerFile(bus.root, 'sid-a')))).toBe(false);
  });

  it('gives one sensor per session and takes over a dead owner\'s claim', () => {
    expect(claimSensor(bus.root, 'sid-a', process.pid).ok).toBe(true);
    expect(deliveryStatus(bus.root, 'sid-a')).toMatchObject({ sensorRunning: true, sensorPid: process.pid });
    const other = claimSensor(bus.root, 'sid-a', process.ppid);
    expect(other.ok).toBe(false);
    releaseSensor(bus.root, 'sid-a', process.pid);
    // A claim left by a dead process (pid that cannot exist) is taken over.
    writeFileSync(pjoin(bus.root, 'state', 'sensor', 'sid-a.pid'), '4194304999 123\n');
    expect(claimSensor(bus.root, 'sid-a', process.pid).ok).toBe(true);
    releaseSensor(bus.root, 'sid-a', process.pid);
    expect(deliveryStatus(bus.root, 'sid-a').sensorRunning).toBe(false);
  });

  it('records nothing when delivery throws, so the next cycle delivers it', () => {
    take();
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'a' });
    expect(() =>
      takePending(bus.root, agent('sid-a', ORIGIN), { now: Date.now(), reporter: createReporter(() => {}), warn: () => {} }, () => {
        throw new Error('EPIPE');
      }),
    ).toThrow('EPIPE');
    expect(take().pending.fresh.map((m) => m.id)).toEqual([a]);
    unlinkSync(ledgerFile(bus.root, 'sid-a'));
  });
});

describe('late arrivals (issue 13: messages imported after an outage)', () => {
  it('an indexed message older than the watermark is delivered once, even one made before the ledger began', () => {
    const t0 = Date.now();
    take(undefined, true, t0);
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'now' });
    // The watermark moves on...
    expect(take(undefined, true, t0 + 120_000).pending.fresh).toHaveLength(1);
    // ...then a message made a minute after the ledger began arrives late (a relay catching
    // up), and one made before it began: both arrived while the session ran (issue 21 §4/3).
    const late = put(bus.root, ids(() => t0 + 60_000), { scope: OPEN, to: '*', body: 'made while the relay was down' });
    const older = put(bus.root, ids(() => t0 - 3_600_000), { scope: OPEN, to: '*', body: 'from before this session' });
    const r = take(undefined, true, t0 + 121_000);
    expect(r.pending.fresh.map((m) => m.body)).toEqual(['from before this session', 'made while the relay was down']);
    expect(r.pending.fresh.map((m) => m.id)).toEqual([older, late]);
    // Not again, not even from a copy in another receive directory (a fan-out's second line).
    put(bus.root, mk, { scope: TRAY, to: 'sid-a', body: 'made while the relay was down', id: late });
    expect(take(undefined, true, t0 + 122_000).pending.fresh).toEqual([]);
    const l = ledgerNow();
    expect(Object.keys(l.late ?? {}).sort()).toEqual([older, late].sort());
    // Past the grace window the record of it goes; the ledger stays small.
    take(undefined, true, t0 + 200_000);
    expect(ledgerNow().late).toBeUndefined();
  });
});

describe('a ledger file as data', () => {
  it("a late-arrival record keyed __proto__ is an id like any other; one with a key that is not an id is dropped, the ledger kept", async () => {
    const { parseLedger } = await import('../../tools/bus/delivery/plan.js');
    const base = { version: 1, sid: 'sid-a', created: 0, updated: 0, marks: {}, above: [], taught: false, drainRounds: 0, index: {} };
    const hostile = parseLedger(`{"version":1,"sid":"sid-a","created":0,"updated":0,"marks":{},"above":[],"taught":false,"drainRounds":0,"index":{},"late":{"__proto__":5}}`);
    expect(hostile).not.toBeNull();
    expect(Object.keys(hostile!.late ?? {})).toEqual(['__proto__']);
    expect(hostile!.late!['__proto__']).toBe(5);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const bad = parseLedger(JSON.stringify({ ...base, late: { 'not an id!': 1, '0mx4aaaaa000-aaaaaaaa': 'x' } }));
    expect(bad).not.toBeNull();
    expect(bad!.late).toBeUndefined();
  });
});
