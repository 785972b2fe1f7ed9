// The chat's history (tools/chat/source/history.ts) on a real temporary bus: the first load
// and its pages newest first across scopes, what counts as history afterwards, and the
// marks the arrivals scanner starts from.

import { describe, expect, it } from 'vitest';
import { type Message, readMessage, scopeDirName, silentReporter } from '../../../tools/bus/store/index.js';
import { createHistory } from '../../../tools/chat/source/history.js';
import { type TempBus, runInProcess, useFamilyPolicy, useTempBus } from '../../helpers/temp-bus.js';
import { ids, put } from '../../helpers/fixtures.js';

let bus: TempBus;
// The chat's history, not permissions: a declared agent (no lineage) posts to #open as under family.
useTempBus((b) => {
  bus = b;
  useFamilyPolicy(b);
});

const OPEN = scopeDirName({ kind: 'open' });
const admitAll = (m: Message | null): m is Message => m !== null;
const history = (admit = admitAll) => createHistory({ root: bus.root, now: Date.now, reporter: silentReporter, admit });

describe('chat history', () => {
  it('loads the newest across scopes, then older pages, each message once, and knows each as history', async () => {
    const agent = { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-history' };
    const mk = ids(() => Date.now() - 60_000);
    const old = Array.from({ length: 6 }, (_, i) => put(bus.root, mk, { scope: { kind: 'channel', name: 'ops' }, to: '#ops', body: `ops ${i}` }));
    for (let i = 0; i < 4; i++) expect((await runInProcess(['send', `open ${i}`], { env: agent })).exitCode).toBe(0);
    const h = history();
    try {
      const first = h.loadInitial(3);
      expect(first.messages.map((m) => m.body)).toEqual(['open 3', 'open 2', 'open 1']);
      expect(first.hasOlder).toBe(true);
      const rest = [h.loadOlder(4), h.loadOlder(4)];
      expect(rest.map((p) => p.messages.map((m) => m.body))).toEqual([
        ['open 0', 'ops 5', 'ops 4', 'ops 3'],
        ['ops 2', 'ops 1', 'ops 0'],
      ]);
      expect(rest.map((p) => p.hasOlder)).toEqual([true, false]);
      expect(h.loadOlder(4)).toEqual({ messages: [], hasOlder: false });
      // Loaded or not, what was on disk at the first load is history.
      for (const id of old) expect(h.has('@ops', id)).toBe(true);
      expect(h.has('@ops', mk())).toBe(false);
      expect(h.has('@nowhere', old[0]!)).toBe(false);
      expect(h.mark(OPEN)).toBeDefined();
      expect(h.mark('@nowhere')).toBeUndefined();
    } finally {
      h.close();
    }
  });

  it('answers from a set of the listing once a full listing is expected, and forgets it all on close', () => {
    const mk = ids(() => Date.now() - 60_000);
    const written = Array.from({ length: 5 }, (_, i) => put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: `h${i}` }));
    const h = history();
    h.loadInitial(1);
    h.expectListing(OPEN);
    for (const id of written) expect(h.has(OPEN, id)).toBe(true);
    expect(h.has(OPEN, mk())).toBe(false);
    h.close();
    expect(h.mark(OPEN)).toBeUndefined();
    expect(h.loadOlder(10)).toEqual({ messages: [], hasOlder: false });
    // What was handed to the screen stays history.
    expect(h.has(OPEN, written[4]!)).toBe(true);
    expect(h.has(OPEN, written[0]!)).toBe(false);
  });

  it('leaves out what the gate does not admit, and still counts it as history', () => {
    const mk = ids(() => Date.now() - 60_000);
    const kept = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'kept' });
    const held = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'held' });
    const h = history((m): m is Message => m !== null && m.body !== 'held');
    try {
      expect(h.loadInitial(10).messages.map((m) => m.id)).toEqual([kept]);
      expect(h.has(OPEN, held)).toBe(true);
      expect(readMessage(bus.root, { kind: 'open' }, held, silentReporter)?.body).toBe('held');
    } finally {
      h.close();
    }
  });
});
