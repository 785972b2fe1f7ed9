// Issue 24 §3, "sends each message once": an outlet's ledger records a request as in flight
// before it is made, so a run that died with one open (or one that ended with no answer)
// marks its next try as a possible repeat, and a sure refusal or a delivery does not.

import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useKeyDirectory } from '../../tools/bus/trust/anchors.js';
import { openLedger, stateDir } from '../../tools/adapters/ledger.js';
import { type TempBus, makeTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
beforeEach(() => {
  bus = makeTempBus();
  mkdirSync(bus.root, { recursive: true, mode: 0o700 });
  useKeyDirectory(bus.root, join(bus.home, '.config', 'attend', 'keys'));
});
afterEach(() => bus.cleanup());

describe('adapter ledger: in flight, and what may repeat', () => {
  it('a request open when the run died is a possible repeat in the next run; a delivered one is never tried again', () => {
    const l = openLedger(bus.root, 'tg');
    expect(l.begin('a')).toBe(false);
    l.record('a', '101');
    expect(l.begin('b')).toBe(false);
    // Killed here: b's request was made, its answer never written.
    l.close();
    const next = openLedger(bus.root, 'tg');
    expect(next.has('a')).toBe(true);
    expect(next.has('b')).toBe(false);
    expect(next.size()).toBe(1);
    expect(next.byRef('101')).toBe('a');
    expect(next.begin('b')).toBe(true);
    next.record('b');
    expect(next.newest()).toBe('b');
    next.close();
    // Once delivered, nothing of b is a repeat any more, across a restart too.
    const third = openLedger(bus.root, 'tg');
    expect(third.size()).toBe(2);
    expect(third.begin('c')).toBe(false);
    third.close();
  });

  it('a sure refusal closes the try (the next is not marked); a try that ended with no answer marks the next, and stays marked after a later refusal', () => {
    const l = openLedger(bus.root, 'slack');
    expect(l.begin('a')).toBe(false);
    l.abandon('a'); // HTTP 503, or no connection made
    expect(l.begin('a')).toBe(false);
    // A timeout: no answer, the try stays open.
    expect(l.begin('b')).toBe(false);
    expect(l.begin('b')).toBe(true);
    l.abandon('b'); // then a sure no: the first may still have been shown
    expect(l.begin('b')).toBe(true);
    l.close();
    const next = openLedger(bus.root, 'slack');
    // a's last try was open at the end (never answered): marked; b stays marked.
    expect(next.begin('a')).toBe(true);
    expect(next.begin('b')).toBe(true);
    expect(next.size()).toBe(0);
    next.close();
  });

  it('reads a log of an older attend (delivered lines only) and skips a torn last line', () => {
    openLedger(bus.root, 'phone').close(); // the directories, made as the adapter makes them
    const dir = stateDir(bus.root, 'phone');
    appendFileSync(join(dir, 'sent.log'), `${JSON.stringify({ id: 'a' })}\n${JSON.stringify({ id: 'b', ref: '7' })}\n{"id":"c","send`);
    const l = openLedger(bus.root, 'phone');
    expect([l.has('a'), l.has('b'), l.has('c')]).toEqual([true, true, false]);
    expect(l.begin('c')).toBe(false);
    l.close();
    expect(readFileSync(join(dir, 'sent.log'), 'utf8').trim().split('\n').at(-1)).toBe(JSON.stringify({ id: 'c', sending: true }));
  });

  it('a log past twice what it keeps is compacted when opened: the newest deliveries with their references, and what may have been shown', () => {
    const id = (i: number) => `m${String(i).padStart(3, '0')}`;
    const l = openLedger(bus.root, 'tg', 5);
    for (let i = 0; i < 12; i++) {
      l.begin(id(i));
      l.record(id(i), String(100 + i));
    }
    l.begin('m900'); // in flight when the run died
    l.close();
    const file = join(stateDir(bus.root, 'tg'), 'sent.log');
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(25);
    const next = openLedger(bus.root, 'tg', 5);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(6);
    expect(next.size()).toBe(5);
    expect([next.has(id(6)), next.has(id(7)), next.has(id(11))]).toEqual([false, true, true]);
    expect([next.byRef('106'), next.byRef('107')]).toEqual([undefined, id(7)]);
    expect(next.newest()).toBe(id(11));
    // What was in flight stays a possible repeat, across the rewrite and the next open.
    expect(next.begin('m900')).toBe(true);
    next.record('m900');
    next.close();
    const third = openLedger(bus.root, 'tg', 5);
    expect([third.has('m900'), third.has(id(7)), third.size()]).toEqual([true, true, 6]);
    expect(third.begin('m901')).toBe(false);
    third.close();
  });
});
