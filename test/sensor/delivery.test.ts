// The sensor's delivery loop (tools/sensor/delivery.ts) over a real temporary bus, in-process:
// wakes take what is pending from the ledger and write it once; a failing wake is a warning
// and the next one recovers; a closed stdout stops the loop and leaves the message pending.

import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerFile, sessionLedgerDir } from '../../tools/bus/delivery/ledger-log.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { VERIFY_CAP } from '../../tools/bus/trust/held.js';
import { createDeliveryLoop, type DeliveryLoop, withBanner } from '../../tools/sensor/delivery.js';
import { nameLookup } from '../../tools/wire/display.js';
import { type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { agent, headerIds, ids, put, PERSON } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const OPEN = { kind: 'open' } as const;

interface Harness {
  loop: DeliveryLoop;
  lines: string[];
  warnings: string[];
  closed: () => number;
  stop(): void;
}

function harness(who: Identity, opts: { write?: (line: string) => void } = {}): Harness {
  const lines: string[] = [];
  const warnings: string[] = [];
  let closed = 0;
  let stopping = false;
  const loop = createDeliveryLoop({
    scan: {
      root: bus.root,
      now: Date.now,
      reporter: silentReporter,
      names: (me) => nameLookup([], me),
      write: opts.write ?? ((l) => void lines.push(l)),
      warn: (l) => void warnings.push(l),
    },
    who: () => who,
    stopping: () => stopping,
    closed: () => {
      closed++;
      stopping = true;
    },
  });
  return { loop, lines, warnings, closed: () => closed, stop: () => (stopping = true) };
}

const me = () => agent('00000000-0000-4000-8000-0000000000d1', join(bus.dir, 'work', 'me'));

describe('the sensor delivery loop', () => {
  it('writes a message as one header and one message line, once, however many wakes ask', async () => {
    const h = harness(me());
    h.loop.wake(); // the cold start on an empty bus: nothing to show
    expect(h.lines).toEqual([]);
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'hello there' });
    // Three requests in one turn of the event loop are one wake.
    h.loop.request();
    h.loop.request();
    h.loop.request();
    await waitFor(() => headerIds(h.lines.join('\n')).includes(a), { what: 'the message' });
    h.loop.wake();
    h.loop.request();
    await new Promise((r) => setImmediate(r));
    expect(headerIds(h.lines.join('\n'))).toEqual([a]);
    expect(h.lines.filter((l) => l.includes('hello there'))).toHaveLength(1);
    expect(h.lines.filter((l) => l.startsWith('message from '))).toHaveLength(1);
    expect(h.loop.delivered()).toBe(1);
  });

  it('a burst of unsigned messages past the verification cap is delivered whole by one request (each pass verifies VERIFY_CAP, then looks again)', async () => {
    const h = harness(me());
    h.loop.wake();
    const mk = ids();
    const burst = VERIFY_CAP * 2 + 50;
    for (let i = 0; i < burst; i++) put(bus.root, mk, { scope: OPEN, to: '*', body: `unsigned ${i}` });
    h.loop.request();
    await waitFor(() => h.loop.delivered() === burst, { what: `all ${burst} messages, with no further event` });
    await h.loop.idle();
    expect(h.loop.delivered()).toBe(burst);
  });

  it('a new loop on the same ledger (a restart) delivers only what is new', () => {
    const who = me();
    const first = harness(who);
    first.loop.wake();
    const mk = ids();
    const a = put(bus.root, mk, { scope: OPEN, to: '*', body: 'before the restart' });
    first.loop.wake();
    expect(headerIds(first.lines.join('\n'))).toEqual([a]);
    first.loop.close();
    // A new process has no ledger in memory: moving the log's mtime makes this one read it again.
    const log = ledgerFile(bus.root, who.id);
    expect(existsSync(log)).toBe(true);
    utimesSync(log, new Date(), new Date(Date.now() + 5_000));
    const b = put(bus.root, mk, { scope: OPEN, to: '*', body: 'while down' });
    const second = harness(who);
    second.loop.wake();
    expect(headerIds(second.lines.join('\n'))).toEqual([b]);
    second.loop.wake();
    expect(headerIds(second.lines.join('\n'))).toEqual([b]);
  });

  it('a wake that fails on the bus warns and leaves the loop running; the next wake delivers', () => {
    const who = me();
    const h = harness(who);
    h.loop.wake();
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'waiting out the fault' });
    // The session's ledger directory is a file: its lock cannot be taken (ENOTDIR).
    const dir = sessionLedgerDir(bus.root, who.id);
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, 'not a directory');
    expect(() => h.loop.wake()).not.toThrow();
    expect(h.warnings.some((w) => w.startsWith('attend: scan failed: '))).toBe(true);
    expect(h.lines).toEqual([]);
    rmSync(dir);
    mkdirSync(dir);
    h.loop.wake();
    expect(headerIds(h.lines.join('\n'))).toEqual([a]);
  });

  it('a closed stdout stops it and leaves the message cut off pending for the next conduit', () => {
    const who = me();
    const h = harness(who, {
      write: () => {
        throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
      },
    });
    h.loop.wake();
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'into a closed pipe' });
    h.loop.wake();
    expect(h.closed()).toBe(1);
    expect(h.loop.delivered()).toBe(0);
    // Stopping: a later wake does nothing.
    h.loop.wake();
    expect(h.closed()).toBe(1);
    const next = harness(who);
    next.loop.wake();
    expect(headerIds(next.lines.join('\n'))).toEqual([a]);
  });

  it('a file renamed in without an index line is found by the look after the settle window', async () => {
    const h = harness(me());
    h.loop.wake();
    const id = ids()();
    const dir = join(bus.root, 'signals', '_broadcast');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${id}.signal`), `external:${PERSON}@pts-9|p|/p|from_kind:human|from_id:${PERSON}|to:*|written by hand\n`, { mode: 0o600 });
    // Only the rename is reported, as the directory watch would: no wake is requested.
    h.loop.renamed();
    await waitFor(() => headerIds(h.lines.join('\n')).includes(id), { what: 'the hand-written message' });
    expect(headerIds(h.lines.join('\n'))).toEqual([id]);
  });

  it('once stopping, a request runs no wake', async () => {
    const h = harness(me());
    h.loop.wake();
    put(bus.root, ids(), { scope: OPEN, to: '*', body: 'too late' });
    h.stop();
    h.loop.request();
    await new Promise((r) => setTimeout(r, 20));
    expect(h.lines).toEqual([]);
  });
});

describe('withBanner', () => {
  it('writes the banner before the first line only', () => {
    const out: string[] = [];
    const write = withBanner((l) => void out.push(l), '[attend] sensor started');
    expect(out).toEqual([]);
    write('one');
    write('two');
    expect(out).toEqual(['[attend] sensor started', 'one', 'two']);
  });
});
