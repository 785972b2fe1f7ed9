import { describe, expect, it } from 'vitest';
import { messageMaker } from '../helpers/messages.js';
import { type FeedState, feedReducer, initialFeed, MEMORY_CAP, newestFromOthers, tabsFor, tabsOf, visibleItems } from '../../tools/chat/state/feed.js';
import { itemLines, type LineContext, MAX_BODY_LINES, visibleWindow, wrapBody } from '../../tools/chat/state/lines.js';
import stringWidth from 'string-width';
import { composeRows } from '../../tools/chat/state/compose.js';
import type { Scope } from '../../tools/wire/envelope.js';

const msg = messageMaker('id', 1_000_000);

const ops: Scope = { kind: 'channel', name: 'ops' };
const tray: Scope = { kind: 'tray', key: '-p-abc' };

function withChannels(s: FeedState): FeedState {
  return feedReducer(s, { type: 'channels', names: ['ops'] });
}

describe('tabs', () => {
  it('places a message in merged, its scopes, and direct when it names me', () => {
    const base = { scopes: [] as Scope[] };
    expect(tabsFor({ ...msg(), ...base, scopes: [{ kind: 'open' }] }, 'me')).toEqual(['merged', '#open']);
    expect(tabsFor({ ...msg({ to: 'me,sid-2' }), scopes: [tray] }, 'me')).toEqual(['merged', 'direct']);
    expect(tabsFor({ ...msg({ to: 'sid-2', fromId: 'me' }), scopes: [tray] }, 'me')).toEqual(['merged', 'direct']);
    expect(tabsFor({ ...msg({ to: '#ops' }), scopes: [ops] }, 'me')).toEqual(['merged', '#ops']);
  });

  it('lists merged, #open, each channel and direct', () => {
    expect(tabsOf(withChannels(initialFeed('me')))).toEqual(['merged', '#open', '#ops', 'direct']);
  });

  it('counts unread per tab, not for my own messages, and clears on switch', () => {
    let s = withChannels(initialFeed('me'));
    s = feedReducer(s, { type: 'switch', tab: '#ops' });
    s = feedReducer(s, { type: 'arrived', messages: [msg(), msg({ scope: ops, to: '#ops' }), msg({ scope: tray, to: 'me' }), msg({ fromId: 'me' })] });
    expect(s.unread).toEqual({ '#ops': 0, merged: 3, '#open': 1, direct: 1 });
    s = feedReducer(s, { type: 'switch', tab: 'direct' });
    expect(s.unread.direct).toBe(0);
    expect(s.unread.merged).toBe(3);
  });

  it('shows a fan-out once and remembers every directory it was in', () => {
    const a = msg({ id: 'fan1', scope: { kind: 'tray', key: 'k1' }, to: 'x,y' });
    const b = { ...a, scope: { kind: 'tray', key: 'k2' } as Scope };
    let s = feedReducer(initialFeed('me'), { type: 'loaded', messages: [a], hasOlder: false });
    s = feedReducer(s, { type: 'arrived', messages: [b] });
    expect(s.messages).toHaveLength(1);
    expect(s.messages[0]?.scopes).toHaveLength(2);
    expect(s.unread.merged ?? 0).toBe(0);
  });

  it('cycles tabs both ways and wraps', () => {
    let s = withChannels(initialFeed('me'));
    s = feedReducer(s, { type: 'cycle', delta: -1 });
    expect(s.active).toBe('direct');
    s = feedReducer(s, { type: 'cycle', delta: 2 });
    expect(s.active).toBe('#open');
  });

  it('falls back to merged when the active channel disappears', () => {
    let s = withChannels(initialFeed('me'));
    s = feedReducer(s, { type: 'switch', tab: '#ops' });
    s = feedReducer(s, { type: 'channels', names: [] });
    expect(s.active).toBe('merged');
  });

  it('keeps the newest MEMORY_CAP messages when following', () => {
    const many = Array.from({ length: MEMORY_CAP + 10 }, () => msg());
    const s = feedReducer(initialFeed('me'), { type: 'loaded', messages: many, hasOlder: false });
    expect(s.messages).toHaveLength(MEMORY_CAP);
    expect(s.hasOlder).toBe(true);
    expect(s.messages[s.messages.length - 1]?.id).toBe(many[many.length - 1]?.id);
  });

  it('holds the view still when scrolled back and a message arrives', () => {
    let s = feedReducer(initialFeed('me', 80), { type: 'loaded', messages: [msg(), msg()], hasOlder: false });
    s = feedReducer(s, { type: 'scroll', delta: 2 });
    s = feedReducer(s, { type: 'arrived', messages: [msg({ body: 'one line' })] });
    expect(s.scroll).toBe(4);
  });

  it('clears a tab for display only and finds the reply target', () => {
    let s = feedReducer(initialFeed('me'), { type: 'loaded', messages: [msg({ time: 10 }), msg({ time: 20, fromId: 'me' })], hasOlder: false });
    expect(newestFromOthers(s)?.time).toBe(10);
    s = feedReducer(s, { type: 'clear', time: 30 });
    expect(visibleItems(s)).toHaveLength(0);
    expect(s.messages).toHaveLength(2);
  });
});

const lc: LineContext = { width: 60, me: 'me', tab: 'merged', name: (id) => (id === 'sid-1' ? 'Nick' : id), colorOf: () => undefined, parentSender: () => 'Hana' };
const text = (lines: { text: string }[][]) => lines.map((l) => l.map((s) => s.text).join('')).join('\n');

describe('lines', () => {
  it('renders the header with time, sender, to, scope and thread marker', () => {
    const out = text(itemLines({ kind: 'msg', msg: { ...msg({ to: 'me', re: 'abc' }), scopes: [tray] } }, lc));
    expect(out.split('\n')[0]).toMatch(/^\d\d:\d\d:\d\d Nick → you {2}dm {2}↳ re Hana$/);
  });

  it('makes hostile bodies inert: escapes, controls, bidi', () => {
    const out = wrapBody('\x1b[2J\x1b]0;pwned\x07 \u202Eevil\r\x00', 80).join('\n');
    expect(out).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
    expect(out).toContain('␛[2J');
    expect(out).toContain('<U+202E>');
  });

  it('wraps a 10,000-character line and caps thousands of lines', () => {
    const long = wrapBody('x'.repeat(10_000), 50);
    expect(long).toHaveLength(MAX_BODY_LINES);
    expect(long.every((l) => Array.from(l).length <= 50)).toBe(true);
    expect(long[long.length - 1]).toContain('more lines');
    const many = wrapBody(Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n'), 50);
    expect(many).toHaveLength(MAX_BODY_LINES);
    expect(many[MAX_BODY_LINES - 1]).toMatch(/^… 4,971 more lines/);
  });

  it('wraps wide characters by terminal columns, keeping every character', () => {
    const cjk = '漢字かな交じり文'.repeat(20); // 160 characters, 320 columns
    const rows = wrapBody(cjk, 50);
    expect(rows.every((r) => stringWidth(r) <= 50)).toBe(true);
    expect(rows.slice(0, -1).every((r) => stringWidth(r) === 50)).toBe(true);
    expect(rows.join('')).toBe(cjk);
    expect(rows).toHaveLength(Math.ceil(320 / 50));
    // An emoji is two columns and a surrogate pair: never split, never past the edge.
    const emoji = `ab${'🎉'.repeat(30)}`;
    const erows = wrapBody(emoji, 9);
    expect(erows.join('')).toBe(emoji);
    expect(erows.every((r) => stringWidth(r) <= 9)).toBe(true);
    // The fold line counts hidden rows in columns too.
    const folded = wrapBody('字'.repeat(2000), 40, 5);
    expect(folded[4]).toMatch(/^… 96 more lines/);
  });

  it('cuts a header of wide names at the column width', () => {
    const wide: LineContext = { ...lc, width: 20, name: () => '名前がとても長いセッション' };
    const [header] = itemLines({ kind: 'msg', msg: { ...msg(), scopes: [{ kind: 'open' } as Scope] } }, wide);
    const row = header!.map((s) => s.text).join('');
    expect(stringWidth(row)).toBeLessThanOrEqual(20);
    expect(row.endsWith('…')).toBe(true);
  });

  it('lays the draft out in columns with the cursor on a whole character', () => {
    const draft = '日本語'.repeat(4); // 12 characters, 24 columns
    const end = composeRows(draft, draft.length, 10);
    expect(end.rows.map((r) => r.before + r.at + r.after)).toEqual(['日本語日本', '語日本語日', '本語 ']);
    expect(end.rows[2]).toEqual({ before: '本語', at: ' ', after: '' });
    expect(end.cursorRow).toBe(2);
    const mid = composeRows(draft, 6, 10);
    expect(mid.rows[1]).toEqual({ before: '語', at: '日', after: '本語日' });
    expect(mid.cursorRow).toBe(1);
    for (const r of [...end.rows, ...mid.rows]) expect(stringWidth(r.before + r.at + r.after)).toBeLessThanOrEqual(10);
  });

  it('windows the bottom rows and reports the top', () => {
    const items = Array.from({ length: 10 }, () => ({ kind: 'msg' as const, msg: { ...msg(), scopes: [{ kind: 'open' } as Scope] } }));
    const bottom = visibleWindow(items, 4, 0, lc);
    expect(bottom.lines).toHaveLength(4);
    expect(text(bottom.lines)).toContain(items[9]!.msg.body);
    expect(bottom.atTop).toBe(false);
    const top = visibleWindow(items, 4, 16, lc);
    expect(top.atTop).toBe(true);
    expect(text(top.lines)).toContain(items[0]!.msg.body);
  });
});
