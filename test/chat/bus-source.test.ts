// The chat's source of messages (tools/chat/bus-source.ts) on a real bus: the first load and
// scroll-back walk the listing caches newest first; what was on disk at the first load is
// history and never arrives again; whatever is written after it arrives once, whether its
// writer indexed it or wrote it by hand, in a directory that existed or a new one.

import { chmodSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { listingCacheDir } from '../../tools/bus/store/listing-cache.js';
import type { Message } from '../../tools/bus/store/messages.js';
import { createBusSource } from '../../tools/chat/bus-source.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { ME, type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { ids, put } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));
/** The person at the keyboard: the one who wrote the human messages of `put`. */
const PERSON = { id: ME, kind: 'human' as const, user: ME };

const OPEN: Scope = { kind: 'open' };
const OPS: Scope = { kind: 'channel', name: 'ops' };

describe('chat bus source', () => {
  it('loads the newest first, then older pages in order, each message once', () => {
    const mk = ids();
    const written: string[] = [];
    for (let i = 0; i < 120; i++) written.push(put(bus.root, mk, { scope: i % 3 === 0 ? OPS : OPEN, to: i % 3 === 0 ? '#ops' : '*', body: `h${i}` }));
    const source = createBusSource({ root: bus.root, reader: PERSON });
    try {
      const first = source.loadInitial(50);
      expect(first.hasOlder).toBe(true);
      const seen = [...first.messages];
      for (let more = first.hasOlder; more; ) {
        const page = source.loadOlder(30);
        seen.push(...page.messages);
        more = page.hasOlder;
      }
      expect(first.messages.map((m) => m.body)).toEqual(written.slice(-50).reverse().map((_, i) => `h${119 - i}`));
      expect(seen.map((m) => m.id)).toEqual([...written].reverse());
      expect(source.loadOlder(30)).toEqual({ messages: [], hasOlder: false });
    } finally {
      source.stop();
    }
  });

  it('never takes history for an arrival; takes what is written after the first load, indexed or by hand, once', async () => {
    const mk = ids();
    const history: string[] = [];
    for (let i = 0; i < 40; i++) history.push(put(bus.root, mk, { scope: OPEN, to: '*', body: `h${i}` }));
    const source = createBusSource({ root: bus.root, rescanMs: 50, batchMs: 10, reader: PERSON });
    const arrived: Message[] = [];
    let rescans = 0;
    try {
      source.loadInitial(10);
      source.start({ arrived: (ms) => arrived.push(...ms), status: () => {}, channels: () => rescans++ });
      // A touched history file wakes the watch; it is still history.
      const old = join(scopeDir(bus.root, OPEN), `${history[3]}.signal`);
      utimesSync(old, new Date(), new Date());
      chmodSync(old, 0o600);
      const live = put(bus.root, mk, { scope: OPEN, to: '*', body: 'live' });
      const byHand = mk();
      writeFileSync(join(scopeDir(bus.root, OPEN), `${byHand}.signal`), `external:${ME}@pts-1|p|/p|by hand\n`, { mode: 0o600 });
      mkdirSync(scopeDir(bus.root, OPS), { recursive: true, mode: 0o700 });
      const inNew = put(bus.root, mk, { scope: OPS, to: '#ops', body: 'in a new channel' });
      await waitFor(() => arrived.length >= 3, { what: 'three arrivals' });
      // Every rescan ends by naming the channels: three more of them, and nothing else came.
      const after = rescans;
      await waitFor(() => rescans >= after + 3, { what: 'three more rescans' });
      expect(arrived.map((m) => m.id).sort()).toEqual([live, byHand, inNew].sort());
    } finally {
      source.stop();
    }
  });

  it('a listing cache that does not read as written is rebuilt once, and its history is still history', async () => {
    const mk = ids();
    const history: string[] = [];
    for (let i = 0; i < 30; i++) history.push(put(bus.root, mk, { scope: OPEN, to: '*', body: `h${i}` }));
    const warm = createBusSource({ root: bus.root, reader: PERSON });
    warm.loadInitial(5);
    warm.stop();
    // The base file the first load wrote, overwritten with lines that parse as nothing.
    const cdir = listingCacheDir(bus.root, '_broadcast');
    const base = readdirSync(cdir).find((n) => n.endsWith('.ids')) as string;
    writeFileSync(join(cdir, base), Buffer.alloc(statSync(join(cdir, base)).size, '~ \n'));
    const source = createBusSource({ root: bus.root, rescanMs: 50, batchMs: 10, reader: PERSON });
    const arrived: Message[] = [];
    try {
      const first = source.loadInitial(50);
      expect(first.messages.map((m) => m.id)).toEqual([...history].reverse());
      source.start({ arrived: (ms) => arrived.push(...ms), status: () => {}, channels: () => {} });
      // A touched history file is looked up in the rebuilt listing, kept open since the load.
      utimesSync(join(scopeDir(bus.root, OPEN), `${history[7]}.signal`), new Date(), new Date());
      const live = put(bus.root, mk, { scope: OPEN, to: '*', body: 'live' });
      await waitFor(() => arrived.length >= 1, { what: 'the live message' });
      expect(arrived.map((m) => m.id)).toEqual([live]);
    } finally {
      source.stop();
    }
  });
});
