// Where a draft goes (tools/chat/state/destination.ts): the tab's default, the reply rule,
// what /reply answers, and the destination line: pure state, table-driven.
import { describe, expect, it } from 'vitest';
import type { Message } from '../../tools/bus/store/messages.js';
import { defaultDestination, destinationLine, type DraftPlan, planDraft } from '../../tools/chat/state/destination.js';
import { type FeedState, feedReducer, initialFeed } from '../../tools/chat/state/feed.js';
import type { PeerRef, Reach, RouteSources } from '../../tools/chat/state/routing.js';
import { messageMaker } from '../helpers/messages.js';
import { bookOf, peer } from '../helpers/peers.js';

const msg = messageMaker('dst', 3_000_000);
const now = 3_600_000;
// Hana's sensor is live: a message to her is shown at once. Nick has no conduit running.
const hana: PeerRef = peer('sid-h', 'Hana', 'agent', { delivery: { sensor: now, drain: null, chat: null, delivering: true } });
const nick: PeerRef = peer('sid-n', 'Nick');
const me: PeerRef = peer('me', 'me', 'human');
const sources: RouteSources = { book: bookOf([hana, nick, me]), channels: ['ops'], me: 'me' };
const reach: Reach = { live: [hana, nick, me], members: (c) => (c === 'ops' ? ['me', 'sid-h'] : []), now };
const names: Record<string, string> = { 'sid-h': 'Hana', 'sid-n': 'Nick', me: 'me' };
const nameOf = (id: string) => names[id] ?? id;

function feedOf(messages: Message[], tab = 'merged'): FeedState {
  let s = feedReducer(initialFeed('me', 80), { type: 'loaded', messages, hasOlder: false });
  s = feedReducer(s, { type: 'channels', names: ['ops'] });
  return feedReducer(s, { type: 'switch', tab });
}

function plan(text: string, feed: FeedState): DraftPlan {
  return planDraft({ text, feed, sources, defaultDest: defaultDestination(feed, sources.book), reach });
}

describe('defaultDestination', () => {
  it('follows the tab: #open for merged and #open, the channel for a channel tab', () => {
    expect(defaultDestination(feedOf([]), sources.book)).toEqual({ kind: 'open' });
    expect(defaultDestination(feedOf([], '#open'), sources.book)).toEqual({ kind: 'open' });
    expect(defaultDestination(feedOf([], '#ops'), sources.book)).toEqual({ kind: 'channel', channel: 'ops' });
  });
  it('in the direct tab: the last direct correspondent, live or known, else a reason', () => {
    const direct = [msg({ fromId: 'sid-n', to: 'me' }), msg({ fromId: 'me', to: 'sid-h' })];
    expect(defaultDestination(feedOf(direct, 'direct'), sources.book)).toEqual({ kind: 'direct', to: [hana] });
    const goneHana = { ...hana, gone: true as const };
    expect(defaultDestination(feedOf(direct, 'direct'), bookOf([nick], [goneHana]))).toEqual({ kind: 'direct', to: [goneHana] });
    expect(defaultDestination(feedOf(direct, 'direct'), bookOf([nick]))).toMatchObject({ kind: 'none' });
    expect(defaultDestination(feedOf([], 'direct'), sources.book)).toMatchObject({ kind: 'none', reason: expect.stringContaining('@Name') });
  });
});

describe('planDraft and destinationLine', () => {
  const older = msg({ fromId: 'sid-n', body: 'older' });
  const newer = msg({ fromId: 'sid-h', body: 'newer' });
  const mine = msg({ fromId: 'me', body: 'mine' });
  const plain = feedOf([older, newer, mine]);
  const selectedOlder = feedReducer(feedReducer(feedReducer(plain, { type: 'select', delta: -1 }), { type: 'select', delta: -1 }), { type: 'select', delta: -1 });

  it.each<[string, string, FeedState, string, boolean]>([
    ['a plain draft goes where the tab points', 'hello', plain, 'to #open (everyone)', false],
    ['an empty draft shows the tab default too', '', plain, 'to #open (everyone)', false],
    ['an address wins over the tab', '@Hana hi', plain, 'to Hana', false],
    ['a channel and a person in it', '#ops @Hana hi', plain, 'to #ops, to Hana', false],
    ['an unknown name warns', '@Zed hi', plain, '✗ nobody known is called @Zed; live: Hana, Nick', true],
    ['a live party with no conduit: it waits, and the line says so', '@Nick hi', plain, 'to Nick — waits for Nick, live, no conduit running', false],
    ['with a selection a plain draft replies to it', 'on it', selectedOlder, `reply to Nick (${older.id})`, false],
    ['with a selection an address still wins', '@Hana on it', selectedOlder, 'to Hana', false],
    ['/reply answers the selection', '/reply ok', selectedOlder, `/reply: reply to Nick (${older.id})`, false],
    ['/reply with nothing selected answers the newest from someone else', '/reply ok', plain, `/reply: reply to Hana (${newer.id})`, false],
    ['/reply with nobody else here', '/reply', feedOf([mine]), '/reply: nothing to reply to in this tab', false],
    ['another command names itself', '  /join #ops', plain, 'command /join', false],
    ['/urgent marks the draft after it, routed as it says (issue 23)', '/urgent @Hana main is broken', plain, 'URGENT to Hana', false],
    ['/urgent with a selection is an urgent reply', '/urgent on it', selectedOlder, `URGENT reply to Nick (${older.id})`, false],
  ])('%s', (_name, text, feed, line, bad) => {
    expect(destinationLine(plan(text, feed), nameOf, 'me')).toEqual({ text: line, bad });
  });

  it('/urgent is not part of the message it sends', () => {
    const p = plan('/urgent @Hana main is broken', plain);
    expect(p).toMatchObject({ kind: 'send', urgent: true, route: { ok: true, body: 'main is broken' } });
    expect(plan('@Hana main is broken', plain)).not.toHaveProperty('urgent');
  });

  it('sends to #open and a channel with nobody else live, and says who sees it later', () => {
    const alone = { live: [me], members: () => ['me', 'sid-gone'], now };
    const p = planDraft({ text: 'anyone?', feed: plain, sources, defaultDest: { kind: 'open' }, reach: alone });
    expect(p).toMatchObject({ kind: 'send', refusal: null, note: 'nobody else is live for #open now; it waits in history for whoever comes' });
    expect(destinationLine(p, nameOf, 'me')).toEqual({ text: 'to #open (everyone) — nobody else is live for #open now; it waits in history for whoever comes', bad: false });
    const c = planDraft({ text: '#ops deploying', feed: plain, sources, defaultDest: { kind: 'open' }, reach: alone });
    expect(destinationLine(c, nameOf, 'me')).toEqual({ text: 'to #ops — nobody else in #ops is live now; it waits in history for its 1 other member', bad: false });
    // A direct message to someone who ended is sent: it waits in their mailbox (issue 21 item 1).
    const goneNick = { ...nick, gone: true as const, lastSeen: now - 5 * 60_000 };
    const d = planDraft({ text: 'hi', feed: plain, sources, defaultDest: { kind: 'direct', to: [goneNick] }, reach: alone });
    expect(destinationLine(d, nameOf, 'me')).toEqual({ text: 'to Nick (gone) — waits for Nick (gone), last seen 5m ago', bad: false });
  });

  it('plans what Enter does: the kind and its target', () => {
    expect(plan('on it', selectedOlder)).toMatchObject({ kind: 'reply', to: { id: older.id } });
    expect(plan('/reply x', plain)).toMatchObject({ kind: 'replyCommand', target: { id: newer.id } });
    expect(plan('/peers', plain)).toEqual({ kind: 'command', name: '/peers' });
    expect(plan('#ops deploying', plain)).toMatchObject({ kind: 'send', route: { ok: true, dest: { kind: 'channel', channel: 'ops' }, body: 'deploying' } });
  });
});
