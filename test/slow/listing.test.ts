// The listing cache in the slow tier: against a full read, as a property (after any
// interleaving of the operations of test/helpers/listing-world.ts, every listing answers what
// reading the whole receive set answers; LISTING_RUNS sets the number of runs, 40), and the
// cases that need over a thousand messages on the bus.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { listingCacheDir } from '../../tools/bus/store/listing-cache.js';
import { listIds } from '../../tools/bus/store/messages.js';
import { runInbox, runThread } from '../../tools/verbs/inbox.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { put } from '../helpers/fixtures.js';
import { apply, check, fullPage, makeWorld, opArb, runInboxIds } from '../helpers/listing-world.js';

describe('listing cache', () => {
  it('answers what a full read answers, whatever happened to the directory, its index or the cache', () => {
    let seed = 0;
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 30 }), (ops) => {
        const w = makeWorld();
        try {
          for (const op of ops) {
            apply(w, op);
            check(w, seed++);
          }
        } finally {
          w.bus.cleanup();
        }
      }),
      { numRuns: Number(process.env.LISTING_RUNS ?? 40) },
    );
  });

  it('folds its newest entries into a new base once there are many, and removes the old base', () => {
    const w = makeWorld();
    try {
      const open: Scope = { kind: 'open' };
      for (let i = 0; i < 10; i++) put(w.bus.root, w.newId, { scope: open, to: '*', body: `h${i}` });
      runInbox(w.ctx(), { limit: 5, page: 1 });
      const cdir = listingCacheDir(w.bus.root, '_broadcast');
      const bases = () => readdirSync(cdir).filter((n) => n.endsWith('.ids'));
      const first = bases();
      expect(first).toHaveLength(1);
      for (let i = 0; i < 700; i++) put(w.bus.root, w.newId, { scope: open, to: '*', body: `a${i}` });
      runInbox(w.ctx(), { limit: 5, page: 1 });
      // Still the same base: what arrived is in the state's tail.
      expect(bases()).toEqual(first);
      for (let i = 0; i < 700; i++) put(w.bus.root, w.newId, { scope: open, to: '*', body: `b${i}` });
      const page = runInbox(w.ctx(), { limit: 5, page: 1 });
      expect(bases()).toHaveLength(1);
      expect(bases()).not.toEqual(first);
      expect(JSON.parse(readFileSync(join(cdir, 'state.json'), 'utf8')).tail).toEqual([]);
      expect(page.total).toBe(1410);
      expect(page.messages.map((m) => m.body)).toEqual(['b699', 'b698', 'b697', 'b696', 'b695']);
      expect(fullPage(w.ctx(), 5, 3)).toEqual({ ...runInboxIds(w, 5, 3) });
    } finally {
      w.bus.cleanup();
    }
  });

  it('reads only the messages of the page it shows, and only a thread’s own messages', () => {
    const w = makeWorld();
    try {
      const open: Scope = { kind: 'open' };
      for (let i = 0; i < 300; i++) put(w.bus.root, w.newId, { scope: open, to: '*', body: `h${i}` });
      const threadRoot = put(w.bus.root, w.newId, { scope: open, to: '*', body: 'root' });
      const reply = put(w.bus.root, w.newId, { scope: open, to: '*', body: 'reply', re: threadRoot });
      for (let i = 0; i < 300; i++) put(w.bus.root, w.newId, { scope: open, to: '*', body: `h${i}` });
      runInbox(w.ctx(), { limit: 20, page: 1 });
      // Every other message made unreadable: a reader that opened one would report it.
      const dir = scopeDir(w.bus.root, open);
      const keep = new Set([threadRoot, reply, ...listIds(dir).slice(-20)]);
      for (const id of listIds(dir)) if (!keep.has(id)) writeFileSync(join(dir, `${id}.signal`), Buffer.from([0]));
      // Rewriting files in place does not change the directory: the cache stays trusted.
      w.warnings.length = 0;
      const page = runInbox(w.ctx(), { limit: 20, page: 1 });
      expect(page.messages).toHaveLength(20);
      expect(page.total).toBe(602);
      expect(runThread(w.ctx(), reply).map((m) => m.body)).toEqual(['root', 'reply']);
      expect(w.warnings).toEqual([]);
    } finally {
      w.bus.cleanup();
    }
  });
});
