// The arrivals scanner (tools/chat/source/arrivals.ts) on a real temporary bus, driven by
// hand (no watch): what the follower names after the first load arrives once, whether its
// writer indexed it or wrote it by hand, in a directory that existed or a new one; history,
// and watch events on it, never arrive.

import { chmodSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Message, scopeDir, scopeDirName, silentReporter } from '../../../tools/bus/store/index.js';
import { createArrivals } from '../../../tools/chat/source/arrivals.js';
import { createHistory } from '../../../tools/chat/source/history.js';
import { ME, type TempBus, runInProcess, useFamilyPolicy, useTempBus } from '../../helpers/temp-bus.js';
import { ids, put, PERSON } from '../../helpers/fixtures.js';

let bus: TempBus;
// The chat's arrivals, not permissions: a declared agent (no lineage) posts to #open as under family.
useTempBus((b) => {
  bus = b;
  useFamilyPolicy(b);
});

const OPEN = scopeDirName({ kind: 'open' });
const admitAll = (m: Message | null): m is Message => m !== null;

function scanner() {
  const history = createHistory({ root: bus.root, now: Date.now, reporter: silentReporter, admit: admitAll });
  const arrived: Message[] = [];
  const arrivals = createArrivals({ root: bus.root, now: Date.now, reporter: silentReporter, history, admit: admitAll, arrived: (m) => arrived.push(m) });
  return { history, arrivals, arrived, bodies: () => arrived.map((m) => m.body) };
}

describe('chat arrivals', () => {
  it('takes what is sent after the first load, once, and never the history', async () => {
    const agent = { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-arrivals' };
    const mk = ids(() => Date.now() - 60_000);
    const old = Array.from({ length: 5 }, (_, i) => put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: `h${i}` }));
    const s = scanner();
    s.history.loadInitial(2);
    s.arrivals.scanDir(OPEN);
    expect(s.arrived).toEqual([]);
    expect((await runInProcess(['send', 'live'], { env: agent })).exitCode).toBe(0);
    s.arrivals.scanDir(OPEN);
    s.arrivals.scanDir(OPEN);
    expect(s.bodies()).toEqual(['live']);
    expect(s.arrived[0]?.fromId).toBe(`bot.unit-arrivals@${ME}`);
    // A watch event on a history file (a touch, a chmod), loaded or not, is not an arrival.
    const file = join(scopeDir(bus.root, { kind: 'open' }), `${old[0]}.signal`);
    utimesSync(file, new Date(), new Date());
    chmodSync(file, 0o600);
    s.arrivals.onFile(OPEN, `${old[0]}.signal`);
    s.arrivals.onFile(OPEN, `${old[4]}.signal`);
    // Nor is a temporary file, a dot file, or a file already gone.
    s.arrivals.onFile(OPEN, `${mk()}.signal.tmp`);
    s.arrivals.onFile(OPEN, `.${mk()}.signal`);
    s.arrivals.onFile(OPEN, `${mk()}.signal`);
    expect(s.bodies()).toEqual(['live']);
    s.history.close();
  });

  it('finds a file written by hand (no index line) and one in a directory made after the first load', () => {
    const mk = ids();
    put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'history' });
    const s = scanner();
    s.history.loadInitial(10);
    const byHand = mk();
    writeFileSync(join(scopeDir(bus.root, { kind: 'open' }), `${byHand}.signal`), `external:${PERSON}@pts-1|p|/p|by hand\n`, { mode: 0o600 });
    // A watch event names it first; the scan that follows does not take it again.
    s.arrivals.onFile(OPEN, `${byHand}.signal`);
    s.arrivals.scanDir(OPEN);
    mkdirSync(scopeDir(bus.root, { kind: 'channel', name: 'ops' }), { recursive: true, mode: 0o700 });
    s.arrivals.scanDir('@ops');
    put(bus.root, mk, { scope: { kind: 'channel', name: 'ops' }, to: '#ops', body: 'in a new channel' });
    s.arrivals.scanDir('@ops');
    s.arrivals.scanDir('@ops');
    expect(s.bodies()).toEqual(['by hand', 'in a new channel']);
    s.history.close();
  });

  it('hands on only what the gate admits, and looks at a held message once', () => {
    const mk = ids();
    const s = scanner();
    s.history.loadInitial(10);
    let asked = 0;
    const arrived: string[] = [];
    const arrivals = createArrivals({
      root: bus.root,
      now: Date.now,
      reporter: silentReporter,
      history: s.history,
      admit: (m): m is Message => (asked++, m !== null && m.body !== 'held'),
      arrived: (m) => arrived.push(m.body),
    });
    put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'held' });
    put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'shown' });
    arrivals.scanDir(OPEN);
    arrivals.scanDir(OPEN);
    expect(arrived).toEqual(['shown']);
    expect(asked).toBe(2);
    s.history.close();
  });
});
