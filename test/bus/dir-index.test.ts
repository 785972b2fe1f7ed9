// The per-directory index hint (tools/bus/store/dir-index.ts): trusted only while it explains every
// change to its directory; anything it cannot explain falls back to a full listing, and a
// file it missed is delivered late by the reconciling listing, never taken for consumed.

import { appendFileSync, mkdirSync, readFileSync, rmSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join as pjoin } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDEX_NAME, type IndexState, NO_INDEX, RECONCILE_MS, SETTLE_MS, dirStamp, readIndex } from '../../tools/bus/store/dir-index.js';
import { type Ledger, readLedger } from '../../tools/bus/delivery/ledger.js';
import { ledgerFile } from '../../tools/bus/delivery/ledger-log.js';
import { takePending } from '../../tools/bus/delivery/take.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { createReporter } from '../../tools/bus/store/messages.js';
import { attendKey } from '../../tools/wire/names.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { agent, ids, put, PERSON } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const ORIGIN = '/srv/app';
const TRAY = { kind: 'tray', key: attendKey(ORIGIN) } as const;
const OPEN = { kind: 'open' } as const;
const openDir = () => scopeDir(bus.root, OPEN);
/** A moment when any change made so far has had its SETTLE_MS to get its index line. */
const settled = () => Date.now() + SETTLE_MS;

function take(now = Date.now()): { fresh: string[]; skipped: string[] } {
  const skipped: string[] = [];
  let fresh: string[] = [];
  takePending(bus.root, agent('sid-a', ORIGIN), { now, reporter: createReporter((l) => skipped.push(l)), warn: () => {} }, (p) => {
    fresh = p.fresh.map((m) => m.id);
    return { consume: fresh, result: undefined };
  });
  return { fresh, skipped };
}

/** #open with one message the reader has taken: its ids, its index state, the directory. */
function seeded(): { mk: () => string; st: IndexState; dir: string } {
  const mk = ids();
  put(bus.root, mk, { scope: OPEN, to: '*', body: 'seed' });
  take();
  return { mk, st: ledger().index['_broadcast']!, dir: openDir() };
}

function ledger(): Ledger {
  const r = readLedger(bus.root, 'sid-a');
  if (r.state !== 'ok') throw new Error(`ledger ${r.state}`);
  return r.ledger;
}

/** A message written the way an older attend or another tool writes the layout: no index line. */
function putForeign(id: string, body = 'foreign'): void {
  mkdirSync(openDir(), { recursive: true });
  writeFileSync(pjoin(openDir(), `${id}.signal`), `external:${PERSON}@pts-1|p|/p|from_kind:human|from_id:${PERSON}|to:*|${body}\n`, { mode: 0o600 });
}

describe('directory index hint', () => {
  it('is read from the remembered offset: the ids written since, and the ledger moves on', () => {
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'first' });
    take();
    const st = ledger().index['_broadcast'];
    expect(st).toBeDefined();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'a' });
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'b' });
    const r = readIndex(openDir(), st, Date.now());
    expect(r.ok && r.ids).toEqual([a, b]);
    expect(take().fresh).toEqual([a, b]);
    expect(ledger().index['_broadcast']!.off).toBeGreaterThan(st!.off);
    expect(take().fresh).toEqual([]);
  });

  it('a file written without its index line, followed by indexed writes, is not trusted: it is listed and delivered', () => {
    const mk = ids();
    take();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'indexed before' });
    take();
    const foreign = mk();
    putForeign(foreign);
    // The moment of the unindexed change, from the directory's own stamp (not the wall clock
    // at the assertion, which a loaded machine can put past SETTLE_MS).
    const gapAt = Number(BigInt(dirStamp(openDir())) / 1_000_000n);
    const after = put(bus.root, mk, { scope: OPEN, to: '*', body: 'indexed after' });
    // Right away the gap may still be a line on its way: what is explained, unsettled.
    expect(readIndex(openDir(), ledger().index['_broadcast'], gapAt)).toMatchObject({ ok: true, ids: [after], settled: false });
    const r = readIndex(openDir(), ledger().index['_broadcast'], settled());
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.why).toBe('unexplained change');
    expect(take(settled()).fresh).toEqual([foreign, after]);
  });

  it('a directory an older attend made (no index) is listed in full, and adopts the index once one appears', () => {
    const mk = ids();
    take();
    const old = mk();
    putForeign(old, 'from an older attend');
    expect(readIndex(openDir(), undefined, Date.now())).toMatchObject({ ok: false, why: 'no index' });
    expect(take().fresh).toEqual([old]);
    // What the listing saw is remembered: the directory's mtime, with no index file.
    const st = ledger().index['_broadcast']!;
    expect(st).toMatchObject({ file: NO_INDEX });
    // Unchanged since a listing that came SETTLE_MS after its last change: not listed again.
    utimesSync(openDir(), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const quiet = { ...st, mtime: dirStamp(openDir()), listed: Date.now() };
    expect(readIndex(openDir(), quiet, Date.now())).toMatchObject({ ok: true, ids: [], settled: true });
    // A listing within SETTLE_MS of the change is not trusted (a change in the same clock tick would not move the mtime).
    const msOf = (ns: string) => Number(BigInt(ns) / 1_000_000n);
    expect(readIndex(openDir(), { ...quiet, listed: msOf(quiet.mtime) + SETTLE_MS - 1 }, Date.now())).toMatchObject({ ok: false, why: 'no index' });
    // Nor past the reconcile period, nor once anything changed.
    expect(readIndex(openDir(), quiet, quiet.listed + RECONCILE_MS)).toMatchObject({ ok: false, why: 'no index' });
    const old2 = mk();
    putForeign(old2, 'another, by hand');
    expect(readIndex(openDir(), quiet, Date.now())).toMatchObject({ ok: false, why: 'no index' });
    expect(take().fresh).toEqual([old2]);
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'new writer' });
    expect(take().fresh).toEqual([a]);
    expect(ledger().index['_broadcast']).toBeDefined();
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'indexed' });
    expect(readIndex(openDir(), ledger().index['_broadcast'], Date.now())).toMatchObject({ ok: true, ids: [b] });
  });

  it('a truncated, garbage or recreated index falls back to a full listing and loses nothing', () => {
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'seed' });
    take();
    const index = pjoin(openDir(), INDEX_NAME);

    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'a' });
    truncateSync(index, 3);
    expect(readIndex(openDir(), ledger().index['_broadcast'], Date.now())).toMatchObject({ ok: false, why: 'index truncated' });
    expect(take().fresh).toEqual([a]);

    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'b' });
    appendFileSync(index, '\u0000\u0001 garbage | not a line\n');
    expect(readIndex(openDir(), ledger().index['_broadcast'], Date.now())).toMatchObject({ ok: false, why: 'garbage line' });
    expect(take().fresh).toEqual([b]);

    unlinkSync(index);
    const c = put(bus.root, mk, { scope: OPEN, to: '*', body: 'c' });
    expect(readIndex(openDir(), ledger().index['_broadcast'], Date.now())).toMatchObject({ ok: false });
    expect(take().fresh).toEqual([c]);
    expect(take().fresh).toEqual([]);
  });

  it('a partial last line is not read as an id; the change it leaves unexplained is listed instead', () => {
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'seed' });
    take();
    const st = ledger().index['_broadcast']!;
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'a' });
    const index = pjoin(openDir(), INDEX_NAME);
    const text = readFileSync(index, 'utf8');
    writeFileSync(index, text.slice(0, -5));
    expect(readIndex(openDir(), st, Date.now())).toMatchObject({ ok: true, ids: [], settled: false });
    expect(readIndex(openDir(), st, settled())).toMatchObject({ ok: false, why: 'unexplained change' });
    expect(take(settled()).fresh).toEqual([a]);
    // The rest of the line arrives: its fragment is garbage, so the next cycle lists again.
    writeFileSync(index, text);
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'b' });
    expect(take().fresh).toEqual([b]);
    const c = put(bus.root, mk, { scope: OPEN, to: '*', body: 'c' });
    expect(readIndex(openDir(), ledger().index['_broadcast'], Date.now())).toMatchObject({ ok: true, ids: [c] });
  });

  it('deletes by cleanup, purge or dissolve force a full listing; a dissolved and recreated directory starts over', () => {
    const mk = ids();
    take();
    const gone = put(bus.root, mk, { scope: OPEN, to: '*', body: 'to be purged' });
    take();
    unlinkSync(pjoin(openDir(), `${gone}.signal`));
    expect(readIndex(openDir(), ledger().index['_broadcast'], settled())).toMatchObject({ ok: false, why: 'unexplained change' });
    expect(take(settled()).fresh).toEqual([]);
    const st = ledger().index['_broadcast'];
    rmSync(openDir(), { recursive: true });
    const again = put(bus.root, mk, { scope: OPEN, to: '*', body: 'after the directory was recreated' });
    expect(readIndex(openDir(), st, Date.now())).toMatchObject({ ok: false });
    expect(take().fresh).toEqual([again]);
  });

  it('one id fanned out into several directories is delivered once', () => {
    const mk = ids();
    take();
    const id = mk();
    put(bus.root, mk, { scope: OPEN, to: 'sid-a', body: 'fan-out', id });
    put(bus.root, mk, { scope: TRAY, to: 'sid-a', body: 'fan-out', id });
    expect(take().fresh).toEqual([id]);
    expect(take().fresh).toEqual([]);
  });

  it('a miss the index cannot see is delivered by the reconciling full listing, never taken for consumed', () => {
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'seed' });
    const t0 = Date.now();
    take(t0);
    // Forge the blind spot: a foreign file lands, and the ledger's stamp already covers it
    // (as when it lands within one timestamp tick of a change the reader saw).
    const foreign = mk();
    putForeign(foreign);
    const file = ledgerFile(bus.root, 'sid-a');
    const l = ledger();
    l.index['_broadcast']!.mtime = readIndex(openDir(), undefined, t0).state!.mtime;
    appendFileSync(file, `\n${JSON.stringify(l)}\n`);
    expect(take(t0 + 60_000).fresh).toEqual([]);
    // Past the grace window the watermark has passed it (it follows the index, so the
    // consumed set stays small)...
    expect(ledger().marks['_broadcast']! > foreign).toBe(true);
    // ...and the reconciling full listing still delivers it: no line for it in the index
    // since the last full listing, which did not see it either.
    expect(take(t0 + RECONCILE_MS + 1_000).fresh).toEqual([foreign]);
    expect(take(t0 + RECONCILE_MS + 2_000).fresh).toEqual([]);
  });

  it('racing writers whose stat-to-stat windows overlap still explain the directory: no full listing', () => {
    const { mk, st, dir } = seeded();
    const index = pjoin(dir, INDEX_NAME);
    // Two writers: both take their "before" stamp, then both rename, then both append —
    // the second's before is not the first's after, but their windows overlap.
    const stamp = () => readIndex(dir, undefined, Date.now()).state!.mtime;
    const before = stamp();
    const a = mk();
    const b = mk();
    putForeign(a);
    putForeign(b);
    const after = stamp();
    appendFileSync(index, `${b} ${before} ${after}\n${a} ${before} ${after}\n`);
    expect(readIndex(dir, st, settled())).toMatchObject({ ok: true, ids: [b, a], settled: true });
  });

  it('a change with no line yet is taken unsettled and read again; once its line lands it is settled', () => {
    const { mk, st, dir } = seeded();
    const before = readIndex(dir, undefined, Date.now()).state!.mtime;
    const x = mk();
    putForeign(x, 'renamed, line not yet appended');
    const r = readIndex(dir, st, Date.now());
    expect(r).toMatchObject({ ok: true, ids: [], settled: false });
    // Nothing moved on: the same lines are read again next time.
    expect(r.ok && r.state).toEqual(st);
    appendFileSync(pjoin(dir, INDEX_NAME), `${x} ${before} ${readIndex(dir, undefined, Date.now()).state!.mtime}\n`);
    expect(readIndex(dir, st, settled())).toMatchObject({ ok: true, ids: [x], settled: true });
    expect(take().fresh).toEqual([x]);
  });

  it('a full listing does not deliver again what the index delivered below the watermark', () => {
    const mk = ids();
    put(bus.root, mk, { scope: OPEN, to: '*', body: 'seed' });
    const t0 = Date.now();
    take(t0);
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'through the index' });
    expect(take(t0 + 10).fresh).toEqual([a]);
    // The watermark passes it, then something unexplained forces a full listing.
    expect(take(t0 + 60_000).fresh).toEqual([]);
    expect(ledger().marks['_broadcast']! > a).toBe(true);
    putForeign(mk(), 'unexplained');
    const r = take(t0 + 61_000);
    expect(r.fresh).toHaveLength(1);
    expect(r.fresh).not.toContain(a);
  });
});
