// The one wake plan every conduit shares (issue #9 §2): notes, teaching, and a digest that
// never folds a message addressed to the session (issue #10 §4).

import { describe, expect, it } from 'vitest';
import type { Scope } from '../../tools/wire/envelope.js';
import type { DeliveryMessage } from '../../tools/wire/party.js';
import { STREAM_FULL_MAX, isPersonal, planStreamWake, shouldTeach, streamItems, wakeNotes } from '../../tools/wire/wake.js';
import { nameLookup } from '../../tools/wire/display.js';

const ME = 'me-session';
let n = 0;
function msg(over: Partial<DeliveryMessage> = {}): DeliveryMessage {
  n++;
  const scope: Scope = over.to && !over.to.startsWith('#') && over.to !== '*' ? { kind: 'tray', key: 'k' } : { kind: 'open' };
  return { id: `id${String(n).padStart(6, '0')}`, scope, time: 1_000 + n, from: 'claude:other', project: 'p', cwd: '/p', fromKind: 'agent', fromId: 'other', to: '*', body: `body ${n}`, legacy: false, ...over };
}

describe('planStreamWake', () => {
  it('up to the threshold every message is shown in full', () => {
    const fresh = Array.from({ length: 8 }, () => msg());
    const plan = planStreamWake({ fresh, hidden: 0, invited: [], taught: true, me: ME });
    expect(plan.full).toEqual(fresh);
    expect(plan.digest).toBeNull();
  });

  it('past the threshold, messages addressed to me stay in full and only the rest is digested', () => {
    const open = Array.from({ length: 12 }, () => msg());
    const direct = [msg({ to: ME }), msg({ to: `x,${ME}` })];
    const plan = planStreamWake({ fresh: [...open.slice(0, 6), direct[0]!, ...open.slice(6), direct[1]!], hidden: 0, invited: [], taught: true, me: ME });
    expect(plan.full.map((m) => m.id)).toEqual(direct.map((m) => m.id));
    expect(plan.digest?.ids).toEqual(open.map((m) => m.id));
    expect(plan.digest?.counts).toMatchObject({ count: 12, toYou: 0, open: 12 });
    expect(plan.later).toEqual([]);
  });

  it('a reply to my message is personal; a reply into someone else’s thread is not', () => {
    const mine = msg({ fromId: ME });
    const theirs = msg();
    const byId = new Map([mine, theirs].map((m) => [m.id, m]));
    expect(isPersonal(msg({ re: mine.id }), ME, byId)).toBe(true);
    expect(isPersonal(msg({ re: theirs.id }), ME, byId)).toBe(false);
    // An unresolved chain is shown rather than folded.
    expect(isPersonal(msg({ re: 'gone' }), ME, byId)).toBe(true);
    // Channel traffic is not personal by membership alone.
    expect(isPersonal(msg({ to: '#ops' }), ME, byId)).toBe(false);
  });

  it('more personal messages than one wake shows: the rest wait for the next wake, none are counted away', () => {
    const direct = Array.from({ length: STREAM_FULL_MAX + 4 }, () => msg({ to: ME }));
    const plan = planStreamWake({ fresh: direct, hidden: 0, invited: [], taught: true, me: ME });
    expect(plan.full).toHaveLength(STREAM_FULL_MAX);
    expect(plan.later).toEqual(direct.slice(STREAM_FULL_MAX).map((m) => m.id));
    expect(plan.digest).toBeNull();
  });

  it('notes and the teaching line come from one place', () => {
    expect(wakeNotes({ hidden: 1, invited: [{ channel: 'ops', count: 2, older: 3 }] })).toEqual([
      '[attend] 1 earlier message not shown; attend inbox',
      '[attend] invited to #ops: 2 earlier messages to read, 3 older not shown',
    ]);
    expect(shouldTeach({ fresh: [msg()], taught: false })).toBe(true);
    expect(shouldTeach({ fresh: [msg()], taught: true })).toBe(false);
    expect(shouldTeach({ fresh: [], taught: false })).toBe(false);
    const plan = planStreamWake({ fresh: [msg()], hidden: 2, invited: [], taught: false, me: ME });
    expect(streamItems(plan, nameLookup([], ME)).map((i) => i.kind)).toEqual(['note', 'message', 'teach']);
  });
});
