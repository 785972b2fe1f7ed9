// The listing cache (tools/bus/store/listing-cache.ts), by hand: what a listing writes, and ids
// named like Object's own properties. The property (every listing answers what a full read
// answers, whatever happened to the directory, its index or the cache) and the cases that
// need a thousand messages are in the slow tier: test/slow/listing.test.ts.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withListings } from '../../tools/bus/store/listing-cache.js';
import { createReporter } from '../../tools/bus/store/messages.js';
import { runInbox } from '../../tools/verbs/inbox.js';
import { runStatus } from '../../tools/verbs/status.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { put } from '../helpers/fixtures.js';
import { apply, makeWorld } from '../helpers/listing-world.js';
import { ME } from '../helpers/temp-bus.js';

describe('listing cache', () => {
  it('a listing with nothing new writes nothing; one with arrivals writes only the cache', () => {
    const w = makeWorld();
    try {
      for (let i = 0; i < 5; i++) apply(w, { k: 'send', scope: i, to: 'me', re: null });
      runInbox(w.ctx(), { limit: 20, page: 1 });
      const cache = join(w.bus.root, 'cache');
      const snap = () => Object.fromEntries(readdirSync(cache, { recursive: true }).map((n) => [n, statSync(join(cache, String(n))).mtimeMs]));
      const before = snap();
      runInbox(w.ctx(), { limit: 20, page: 1 });
      runStatus(w.ctx());
      expect(snap()).toEqual(before);
      apply(w, { k: 'send', scope: 1, to: 'none', re: null });
      runInbox(w.ctx(), { limit: 20, page: 1 });
      expect(snap()).not.toEqual(before);
    } finally {
      w.bus.cleanup();
    }
  });
});

describe('listing cache, by hand', () => {
  it('counts tray mail per party, whatever the ids are called', () => {
    const w = makeWorld();
    try {
      const tray = w.scopes[0] as Scope;
      // Agents writing to the person (every node reaches the person); only the ids are odd.
      put(w.bus.root, w.newId, { scope: tray, to: 'constructor', fromId: '__proto__', fromKind: 'agent', body: 'not mine' });
      put(w.bus.root, w.newId, { scope: tray, to: `__proto__,${ME}`, fromId: 'hana', fromKind: 'agent', body: 'mine' });
      put(w.bus.root, w.newId, { scope: tray, to: ME, fromId: 'toString', fromKind: 'agent', body: 'mine too' });
      const page = runInbox(w.ctx(), { limit: 10, page: 1 });
      expect(page.messages.map((m) => m.body)).toEqual(['mine too', 'mine']);
      expect(page.total).toBe(2);
      withListings(w.bus.root, [tray], { now: w.clock.now, reporter: createReporter(() => {}) }, ([l]) => {
        expect([l!.countFor('__proto__'), l!.countFor('constructor'), l!.countFor('toString'), l!.countFor(ME)]).toEqual([2, 1, 1, 2]);
      });
    } finally {
      w.bus.cleanup();
    }
  });
});
