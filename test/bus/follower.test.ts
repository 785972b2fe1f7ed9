// The one follower (tools/bus/store/follower.ts) over a real temporary bus: what is new in a
// scope directory comes from the index while it explains the directory, else from a full
// listing cut at the caller's window; nothing written is ever missed, whatever happened to the
// index or the directory.

import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDEX_NAME, type IndexState, NO_INDEX, RECONCILE_MS, SETTLE_MS } from '../../tools/bus/store/dir-index.js';
import { type Followed, follow, followTail, newTailState } from '../../tools/bus/store/follower.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import type { Reporter } from '../../tools/bus/store/messages.js';
import { idFloor } from '../../tools/wire/ids.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { ids, put } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const OPEN = { kind: 'open' } as const;
const dir = () => scopeDir(bus.root, OPEN);
/** A moment when every change so far has had its SETTLE_MS to get its index line. */
const settled = () => Date.now() + SETTLE_MS;

/** A message written the way another tool writes the layout: no index line. */
function byHand(id: string): void {
  mkdirSync(dir(), { recursive: true });
  writeFileSync(join(dir(), `${id}.signal`), `external:old@pts-1|p|/p|from_kind:human|from_id:old|to:*|by hand\n`, { mode: 0o600 });
}

/** The state a first look leaves (a full listing: the reader has seen nothing yet). */
function firstLook(now = Date.now()): IndexState {
  const f = follow(dir(), undefined, { now });
  expect(f.via).toBe('listing');
  return f.state!;
}

const send = (mk: () => string, body = 'm') => put(bus.root, mk, { scope: OPEN, to: '*', body });

describe('follow: the index while it explains the directory', () => {
  it('a first look lists in full; then the ids written since come from the index, in order, and nothing twice', () => {
    const mk = ids();
    const old = [send(mk), send(mk)];
    const first = follow(dir(), undefined, { now: Date.now() });
    expect(first).toMatchObject({ via: 'listing', why: 'first sight', ids: old, failed: false });
    const a = send(mk);
    const b = send(mk);
    const next = follow(dir(), first.state, { now: Date.now() });
    expect(next).toMatchObject({ via: 'index', ids: [a, b], settled: true });
    expect(next.state!.off).toBeGreaterThan(first.state!.off);
    expect(follow(dir(), next.state, { now: Date.now() })).toMatchObject({ via: 'index', ids: [], settled: true });
  });

  it('a directory not there yet is nothing to read, and one made since is listed', () => {
    expect(follow(dir(), undefined, { now: Date.now() })).toEqual({ via: 'none', ids: [], state: undefined, absent: true });
    const a = send(ids());
    expect(follow(dir(), undefined, { now: Date.now() })).toMatchObject({ via: 'listing', ids: [a] });
  });

  it('lists in full once the reconcile period has passed, unless the reader records nothing', () => {
    const mk = ids();
    send(mk);
    const t0 = Date.now();
    const st = firstLook(t0);
    const a = send(mk);
    expect(follow(dir(), st, { now: t0 + RECONCILE_MS, reconcile: false })).toMatchObject({ via: 'index', ids: [a] });
    expect(follow(dir(), st, { now: t0 + RECONCILE_MS })).toMatchObject({ via: 'listing', why: 'reconcile' });
  });
});

describe('follow: anything the index cannot explain is listed', () => {
  it('a file written by hand without its line is found: unsettled at first, then by a full listing', () => {
    const mk = ids();
    send(mk);
    const st = firstLook();
    const foreign = mk();
    byHand(foreign);
    const after = send(mk);
    const t = Date.now();
    // Right away the gap may be a line on its way: the ids explained so far, and the same lines again next time.
    const now = follow(dir(), st, { now: t });
    expect(now).toMatchObject({ via: 'index', ids: [after], settled: false });
    expect(now.state).toEqual(st);
    expect(follow(dir(), st, { now: settled() })).toMatchObject({ via: 'listing', why: 'unexplained change', ids: expect.arrayContaining([foreign, after]) });
  });

  it('a torn last line is not read as an id; the change it leaves unexplained is listed', () => {
    const mk = ids();
    send(mk);
    const st = firstLook();
    const a = send(mk);
    const t = Date.now();
    const index = join(dir(), INDEX_NAME);
    const text = readFileSync(index, 'utf8');
    writeFileSync(index, text.slice(0, -5));
    expect(follow(dir(), st, { now: t })).toMatchObject({ via: 'index', ids: [], settled: false });
    const f = follow(dir(), st, { now: settled() });
    expect(f).toMatchObject({ via: 'listing', why: 'unexplained change' });
    expect(f.via === 'listing' && f.ids).toContain(a);
  });

  it('a truncated, garbage or recreated index is listed, and loses nothing', () => {
    const mk = ids();
    send(mk);
    let st = firstLook();
    const index = join(dir(), INDEX_NAME);
    const look = (why: string, id: string) => {
      const f = follow(dir(), st, { now: Date.now() });
      expect(f).toMatchObject({ via: 'listing', why });
      expect(f.via === 'listing' && f.ids).toContain(id);
      st = f.state!;
    };
    const a = send(mk);
    truncateSync(index, 3);
    look('index truncated', a);
    const b = send(mk);
    appendFileSync(index, '\u0000 garbage | not a line\n');
    look('garbage line', b);
    const c = send(mk);
    writeFileSync(`${index}.new`, readFileSync(index));
    renameSync(`${index}.new`, index);
    look('index replaced', c);
    const d = send(mk);
    expect(follow(dir(), st, { now: Date.now() })).toMatchObject({ via: 'index', ids: [d], settled: true });
  });

  it('a delete is listed; a directory removed and made again starts over', () => {
    const mk = ids();
    const gone = send(mk);
    const kept = send(mk);
    const st = firstLook();
    unlinkSync(join(dir(), `${gone}.signal`));
    expect(follow(dir(), st, { now: settled() })).toMatchObject({ via: 'listing', why: 'unexplained change', ids: [kept] });
    rmSync(dir(), { recursive: true });
    expect(follow(dir(), st, { now: Date.now() })).toMatchObject({ via: 'none', ids: [] });
    const again = send(mk);
    expect(follow(dir(), st, { now: Date.now() })).toMatchObject({ via: 'listing', ids: [again] });
  });

  it('a directory without an index is listed, then left alone while its mtime stands still (but not within a tick of the listing)', () => {
    const mk = ids();
    const a = mk();
    byHand(a);
    const f = follow(dir(), undefined, { now: Date.now() });
    expect(f).toMatchObject({ via: 'listing', why: 'no index', ids: [a] });
    expect(f.state).toMatchObject({ file: NO_INDEX });
    // A listing made SETTLE_MS after the directory's last change: nothing changed since.
    const past = new Date(Date.now() - 60_000);
    utimesSync(dir(), past, past);
    const quiet = follow(dir(), undefined, { now: Date.now() }).state!;
    expect(follow(dir(), quiet, { now: Date.now() })).toMatchObject({ via: 'index', ids: [], settled: true });
    // The same-tick guard: a listing within SETTLE_MS of the change could have missed a file made in the same tick.
    const early = { ...quiet, listed: Number(BigInt(quiet.mtime) / 1_000_000n) + SETTLE_MS - 1 };
    expect(follow(dir(), early, { now: Date.now() })).toMatchObject({ via: 'listing', why: 'no index' });
    // Past the reconcile period, and once anything changed, it is listed again.
    expect(follow(dir(), quiet, { now: quiet.listed + RECONCILE_MS })).toMatchObject({ via: 'listing' });
    const b = mk();
    byHand(b);
    expect(follow(dir(), quiet, { now: Date.now() })).toMatchObject({ via: 'listing', ids: [a, b] });
  });

  it('a symlinked scope directory is refused and told, never read through', () => {
    const elsewhere = join(bus.dir, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'x.signal'), 'external:a@b|p|/p|hi\n');
    mkdirSync(join(bus.root, 'signals'), { recursive: true });
    symlinkSync(elsewhere, dir());
    const told: string[] = [];
    const reporter: Reporter = { skip() {}, unreadable: (p, why) => told.push(`${p}: ${why}`) };
    expect(follow(dir(), undefined, { now: Date.now(), reporter })).toEqual({ via: 'none', ids: [], state: undefined, absent: false });
    expect(told.join('\n')).toMatch(/symbolic link/);
  });
});

describe('follow: the caller’s window', () => {
  it('a full listing hands back the ids at or above the floor and counts the rest; the index names what it names', () => {
    const mk = ids(() => Date.now() - 3_600_000);
    const old = [send(mk), send(mk), send(mk)];
    const now = ids();
    const young = [send(now), send(now)];
    const floor = idFloor(Date.now() - 60_000);
    const f = follow(dir(), undefined, { now: Date.now(), floor });
    expect(f).toMatchObject({ via: 'listing', ids: young, below: old.length });
    expect(follow(dir(), undefined, { now: Date.now() })).toMatchObject({ via: 'listing', ids: [...old, ...young], below: 0 });
    // The index is what was written since, whatever its ids: the window cuts listings only.
    const late = send(mk);
    expect(follow(dir(), f.state, { now: Date.now(), floor })).toMatchObject({ via: 'index', ids: [late] });
  });

  it('without `list`, a listing that is due is only said to be due', () => {
    const mk = ids();
    send(mk);
    const st = firstLook();
    byHand(mk());
    const f: Followed = follow(dir(), st, { now: settled(), list: false });
    expect(f).toMatchObject({ via: 'due', why: 'unexplained change' });
    expect('ids' in f).toBe(false);
  });
});

describe('followTail: the index as it comes, a full listing when it stays unexplained', () => {
  const opts = (now: number) => ({ now, patience: 1_000, every: 100 });

  it('takes indexed ids past a gap at once, and lists once the gap has outstayed its patience', () => {
    const mk = ids();
    send(mk);
    const st = newTailState();
    expect(followTail(dir(), st, opts(Date.now()))).toMatchObject({ via: 'listing' });
    const a = send(mk);
    expect(followTail(dir(), st, opts(Date.now()))).toEqual({ via: 'index', ids: [a] });
    const foreign = mk();
    byHand(foreign);
    const b = send(mk);
    const t = settled();
    const first = followTail(dir(), st, opts(t));
    // Past the gap, the line written after it is taken; the file without one waits.
    expect(first).toEqual({ via: 'index', ids: [b], recheckAt: t + 1_000 });
    expect(followTail(dir(), st, opts(t + 500))).toEqual({ via: 'index', ids: [], recheckAt: t + 1_000 });
    const listed = followTail(dir(), st, opts(t + 1_000));
    expect(listed.via).toBe('listing');
    expect(listed.ids).toContain(foreign);
    const c = send(mk);
    expect(followTail(dir(), st, opts(t + 1_001))).toEqual({ via: 'index', ids: [c] });
  });

  it('a recreated index is listed at once', () => {
    const mk = ids();
    send(mk);
    const st = newTailState();
    followTail(dir(), st, opts(Date.now()));
    const a = send(mk);
    const index = join(dir(), INDEX_NAME);
    writeFileSync(`${index}.new`, readFileSync(index));
    renameSync(`${index}.new`, index);
    const f = followTail(dir(), st, opts(Date.now()));
    expect(f.via).toBe('listing');
    expect(f.ids).toContain(a);
  });

  it('a directory without an index is not listed again while its mtime stands still', () => {
    const mk = ids();
    const a = mk();
    byHand(a);
    const past = new Date(Date.now() - 60_000);
    utimesSync(dir(), past, past);
    const st = newTailState();
    expect(followTail(dir(), st, opts(Date.now()))).toEqual({ via: 'listing', ids: [a] });
    expect(followTail(dir(), st, opts(Date.now()))).toEqual({ via: 'index', ids: [] });
    const b = mk();
    byHand(b);
    expect(followTail(dir(), st, opts(Date.now()))).toEqual({ via: 'listing', ids: [a, b] });
  });
});
