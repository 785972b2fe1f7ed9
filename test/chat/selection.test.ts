// Message selection in the feed (issue #5: `/reply` answers "the selected or newest
// message"), as a pure reducer, and its marks in the rendered lines.

import { describe, expect, it } from 'vitest';
import { messageMaker } from '../helpers/messages.js';
import type { Message } from '../../tools/bus/store/messages.js';
import { type FeedState, feedReducer, initialFeed, selectedMessage, visibleItems } from '../../tools/chat/state/feed.js';
import { itemLines, type LineContext, visibleWindow } from '../../tools/chat/state/lines.js';
import type { Scope } from '../../tools/wire/envelope.js';

const msg = messageMaker('sel', 2_000_000);

const ops: Scope = { kind: 'channel', name: 'ops' };
const up = { type: 'select', delta: -1 } as const;
const down = { type: 'select', delta: 1 } as const;

function feedOf(messages: Message[], height = 20): FeedState {
  let s = feedReducer(initialFeed('me', 60), { type: 'loaded', messages, hasOlder: false });
  s = feedReducer(s, { type: 'channels', names: ['ops'] });
  return feedReducer(s, { type: 'resize', width: 60, height });
}

const lcFor = (s: FeedState): LineContext => ({
  width: s.width,
  me: 'me',
  tab: s.active,
  maxBodyLines: s.maxBody,
  selected: s.selected,
  name: (id) => id,
  colorOf: () => undefined,
  parentSender: () => undefined,
});
const text = (lines: { text: string }[][]) => lines.map((l) => l.map((x) => x.text).join('')).join('\n');

describe('feed selection', () => {
  it('the first Alt-↑ picks the newest message of another party, stepping over my own newer ones', () => {
    const theirs = msg({ fromId: 'sid-n' });
    const mine1 = msg({ fromId: 'me' });
    const mine2 = msg({ fromId: 'me' });
    let s = feedReducer(feedOf([theirs, mine1, mine2]), up);
    expect(s.selected).toBe(theirs.id);
    // Down from there reaches my own, in order.
    s = feedReducer(s, down);
    expect(s.selected).toBe(mine1.id);
    // With only my own messages, the newest of them.
    expect(feedReducer(feedOf([mine1, mine2]), up).selected).toBe(mine2.id);
  });

  it('moves from the newest up and back down; past the newest it lets go and follows again', () => {
    const ms = [msg(), msg(), msg()];
    let s = feedOf(ms);
    expect(s.selected).toBeNull();
    expect(feedReducer(s, down)).toBe(s); // nothing to move down to
    s = feedReducer(s, up);
    expect(s.selected).toBe(ms[2]!.id);
    s = feedReducer(s, up);
    expect(selectedMessage(s)?.id).toBe(ms[1]!.id);
    s = feedReducer(feedReducer(s, up), up); // clamps at the oldest
    expect(s.selected).toBe(ms[0]!.id);
    s = feedReducer(feedReducer(s, down), down);
    expect(s.selected).toBe(ms[2]!.id);
    s = feedReducer(s, down);
    expect(s.selected).toBeNull();
    expect(s.scroll).toBe(0);
  });

  it('selects only messages of the active tab, skips notices, and is cleared by unselect, switch and clear', () => {
    const open = msg();
    const inOps = msg({ scope: ops, to: '#ops' });
    let s = feedOf([open, inOps]);
    s = feedReducer(s, { type: 'switch', tab: '#open' });
    s = feedReducer(s, { type: 'notice', text: 'a notice', time: Date.now() });
    expect(visibleItems(s).map((i) => i.kind)).toEqual(['msg', 'notice']);
    s = feedReducer(s, up);
    expect(s.selected).toBe(open.id);
    expect(feedReducer(s, up).selected).toBe(open.id); // the only one here; the #ops message is not in this tab
    expect(feedReducer(s, { type: 'unselect' }).selected).toBeNull();
    expect(feedReducer(s, { type: 'switch', tab: 'merged' }).selected).toBeNull();
    expect(feedReducer(s, { type: 'clear', time: Date.now() + 1000 }).selected).toBeNull();
    expect(feedReducer(feedOf([]), up).selected).toBeNull();
  });

  it('scrolls so the selected message is always whole on screen, walking all the way up and down', () => {
    // Bodies of 1 to 5 rows, a feed of 7 rows: most steps have to scroll.
    const ms = Array.from({ length: 30 }, (_, i) => msg({ body: Array.from({ length: (i % 5) + 1 }, (_, k) => `m${i} row ${k}`).join('\n') }));
    let s = feedOf(ms, 7);
    const check = (want: number) => {
      expect(s.selected).toBe(ms[want]!.id);
      const shown = text(visibleWindow(visibleItems(s), s.height, s.scroll, lcFor(s)).lines).split('\n');
      expect(shown.filter((l) => l.startsWith('▶ '))).toHaveLength(1);
      for (let k = 0; k <= want % 5; k++) expect(shown).toContain(`│ m${want} row ${k}`);
    };
    for (let i = 29; i >= 0; i--) {
      s = feedReducer(s, up);
      check(i);
    }
    expect(s.scroll).toBeGreaterThan(0);
    for (let i = 1; i < 30; i++) {
      s = feedReducer(s, down);
      check(i);
    }
  });

  it('holds the view on the selection when messages arrive, and keeps it in view on resize', () => {
    const ms = Array.from({ length: 10 }, () => msg());
    let s = feedOf(ms, 6);
    s = feedReducer(feedReducer(s, up), up);
    const before = s.scroll;
    s = feedReducer(s, { type: 'arrived', messages: [msg(), msg()] });
    expect(s.selected).toBe(ms[8]!.id);
    expect(s.scroll).toBe(before + 4); // two messages of a header and one body row each
    s = feedReducer(s, { type: 'resize', width: 40, height: 3 });
    const shown = text(visibleWindow(visibleItems(s), s.height, s.scroll, lcFor(s)).lines);
    expect(shown).toContain('▶ ');
    expect(shown).toContain(`│ ${ms[8]!.body}`);
  });

  it('marks the selected message with ▶ and a bar, in the same rows as unmarked', () => {
    const m = { ...msg({ body: 'one\ntwo' }), scopes: [{ kind: 'open' } as Scope] };
    const lc = lcFor(feedOf([m]));
    const plain = itemLines({ kind: 'msg', msg: m }, lc);
    const marked = itemLines({ kind: 'msg', msg: m }, { ...lc, selected: m.id });
    expect(marked).toHaveLength(plain.length);
    expect(text(plain)).not.toContain('▶');
    expect(text(marked).split('\n')).toEqual([`▶ ${text([plain[0]!])}`, '│ one', '│ two']);
  });
});
