import { describe, expect, it } from 'vitest';
import { completeAt, editDistance, matchName, parseAddress, type PeerRef, reachNote, resolveRoute, type RouteSources, unreachableReason } from '../../tools/chat/state/routing.js';
import { bookOf, peer } from '../helpers/peers.js';

const peers: PeerRef[] = [peer('sid-1', 'Nick-alpha'), peer('sid-2', 'Nick-beta'), peer('sid-3', 'Hana'), peer('aaron', 'aaron', 'human'), peer('me', 'me', 'human')];
const src: RouteSources = { book: bookOf(peers), channels: ['ops', 'release'], me: 'me' };
const withPeers = (more: PeerRef[], channels: string[] = []): RouteSources => ({ book: bookOf([...peers, ...more]), channels, me: 'me' });
const open = { kind: 'open' } as const;

describe('parseAddress', () => {
  it('splits leading tokens from the body', () => {
    const r = parseAddress('@Hana #ops  hello @you #not');
    expect(r.tokens.map((t) => `${t.sigil}${t.name}`)).toEqual(['@Hana', '#ops']);
    expect(r.body).toBe('hello @you #not');
  });
  it('treats a sigil glued to punctuation as prose', () => {
    expect(parseAddress('@Hana: hi').tokens).toEqual([]);
  });
});

describe('editDistance and matchName', () => {
  it.each([
    ['hana', 'hana', 0],
    ['hnaa', 'hana', 2],
    ['han', 'hana', 1],
    ['xxxxx', 'hana', 3],
  ])('%s ~ %s = %i', (a, b, d) => expect(Math.min(editDistance(a, b), 3)).toBe(d));

  it('takes an exact name or a unique prefix; a close name is only a suggestion', () => {
    expect(matchName('HANA', peers, (p) => p.name)).toMatchObject({ kind: 'one', item: { id: 'sid-3' } });
    expect(matchName('hA', peers, (p) => p.name)).toMatchObject({ kind: 'one', item: { id: 'sid-3' } });
    expect(matchName('hanna', peers, (p) => p.name)).toMatchObject({ kind: 'none', suggestions: [{ id: 'sid-3' }] });
    expect(matchName('Hanb', [...peers, { id: 'x', name: 'Hanc', kind: 'agent' }], (p) => p.name)).toMatchObject({ kind: 'none', suggestions: [{ name: 'Hana' }, { name: 'Hanc' }] });
    expect(matchName('zzzzzz', peers, (p) => p.name)).toEqual({ kind: 'none', suggestions: [] });
    expect(matchName('nick', peers, (p) => p.name)).toMatchObject({ kind: 'ambiguous', items: [{ id: 'sid-1' }, { id: 'sid-2' }] });
  });
  it('takes an exact id, or an id prefix of 8 or more', () => {
    const agents: PeerRef[] = [peer('0123456789ab', 'x'), peer('0123456700cd', 'y')];
    expect(matchName('0123456789ab', agents, (p) => p.name, (p) => p.id)).toMatchObject({ kind: 'one', item: { name: 'x' } });
    expect(matchName('01234567', agents, (p) => p.name, (p) => p.id).kind).toBe('ambiguous');
    expect(matchName('012345678', agents, (p) => p.name, (p) => p.id)).toMatchObject({ kind: 'one', item: { name: 'x' } });
    expect(matchName('0123456', agents, (p) => p.name, (p) => p.id).kind).toBe('none');
  });
});

describe('resolveRoute', () => {
  it('goes to the tab default with no address', () => {
    expect(resolveRoute('hello', src, open)).toEqual({ ok: true, dest: { kind: 'open' }, body: 'hello' });
    expect(resolveRoute('hello', src, { kind: 'channel', channel: 'ops' })).toMatchObject({ ok: true, dest: { kind: 'channel', channel: 'ops' } });
  });
  it('addresses people case-insensitively, by a unique prefix or by id', () => {
    const r = resolveRoute('@hana @NICK-ALPHA take this', src, open);
    expect(r).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-3' }, { id: 'sid-1' }] }, body: 'take this' });
    expect(resolveRoute('@nick-b hi', src, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-2' }] } });
    expect(resolveRoute('@sid-3 hi', src, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-3' }] } });
  });
  it('never sends to a typo: @alpah is not alpha, @bex is not bet; it suggests instead (issue 10 item 13)', () => {
    const s2 = withPeers([peer('sid-a', 'alpha'), peer('sid-b', 'bet')], ['ops']);
    expect(resolveRoute('@alpah hi', s2, open)).toEqual({ ok: false, reason: 'nobody known is called @alpah; did you mean @alpha? (Tab completes)', body: 'hi' });
    expect(resolveRoute('@bex hi', s2, open)).toEqual({ ok: false, reason: 'nobody known is called @bex; did you mean @bet? (Tab completes)', body: 'hi' });
    expect(resolveRoute('@Hnaa hi', src, open)).toMatchObject({ ok: false, reason: 'nobody known is called @Hnaa; did you mean @Hana? (Tab completes)' });
    expect(resolveRoute('#opz deploying', src, open)).toEqual({ ok: false, reason: 'no channel #opz; did you mean #ops? (Tab completes)', body: 'deploying' });
    expect(resolveRoute('#zzzz x', src, open)).toMatchObject({ ok: false, reason: 'no channel #zzzz; channels: #ops, #release' });
    expect(resolveRoute('#rel x', src, open)).toMatchObject({ ok: true, dest: { kind: 'channel', channel: 'release' } });
  });
  it('a human and an agent with the same name are ambiguous, the operator included (issue 10 item 10)', () => {
    const twins = withPeers([peer('alpha', 'alpha', 'human'), peer('sid-alpha-1234', 'alpha')]);
    expect(resolveRoute('@alpha hi', twins, open)).toMatchObject({
      ok: false,
      reason: "@alpha is ambiguous: alpha (human), alpha (agent sid-alph); @human:<username> names the person, @ and 8 or more characters of an agent's id the agent",
    });
    expect(resolveRoute('@human:alpha hi', twins, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'alpha', kind: 'human' }] }, body: 'hi' });
    expect(resolveRoute('@human:nobody hi', twins, open)).toMatchObject({ ok: false, reason: expect.stringContaining('no known human called nobody') });
    expect(resolveRoute('@human:me hi', twins, open)).toMatchObject({ ok: false, reason: '@human:me is you' });
    expect(resolveRoute('@sid-alpha hi', twins, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-alpha-1234' }] } });
    const mine = withPeers([peer('sid-me-agent', 'ME')]);
    expect(resolveRoute('@me hi', mine, open)).toMatchObject({ ok: false, reason: expect.stringContaining('@me is ambiguous: me (human, you), ME (agent sid-me-a)') });
  });
  it('refuses ambiguity and lists the candidates', () => {
    const r = resolveRoute('@Nick hi', src, open);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe('@Nick is ambiguous: Nick-alpha, Nick-beta');
  });
  it('never addresses the operator themselves', () => {
    expect(resolveRoute('@me hi', src, open)).toMatchObject({ ok: false, reason: '@me is you' });
  });
  it('refuses an unknown name and lists who is live', () => {
    const r = resolveRoute('@Zedekiah hi', src, open);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain('live: Nick-alpha');
  });
  it('routes channels, channel+person, and refuses two channels', () => {
    expect(resolveRoute('#ops deploying', src, open)).toMatchObject({ ok: true, dest: { kind: 'channel', channel: 'ops', to: [] } });
    expect(resolveRoute('#ops @Hana look', src, open)).toMatchObject({ ok: true, dest: { kind: 'channel', channel: 'ops', to: [{ id: 'sid-3' }] } });
    expect(resolveRoute('#ops #release x', src, open).ok).toBe(false);
    expect(resolveRoute('#open hi', src, { kind: 'channel', channel: 'ops' })).toMatchObject({ ok: true, dest: { kind: 'open' } });
  });
  it('refuses the direct tab with nobody to default to', () => {
    expect(resolveRoute('hi', src, { kind: 'none', reason: 'pick someone' })).toEqual({ ok: false, reason: 'pick someone', body: 'hi' });
  });
});

describe('unreachableReason and reachNote (issue 10 item 12: #open and channels are sent, live readers or not)', () => {
  const now = 10 * 3_600_000;
  const reach = { live: peers, members: (c: string) => (c === 'ops' ? ['me', 'sid-3', 'gone-1'] : c === 'release' ? ['me', 'gone-1', 'gone-2'] : ['me']), now };
  const alone = { live: [peers[4] as PeerRef], members: reach.members, now };
  const api = peer('sid-api', 'api', 'agent', { gone: true, lastSeen: now - 2 * 3_600_000 });
  it('never refuses a party for not being live: it has a mailbox (issue 21 item 1)', () => {
    expect(unreachableReason({ kind: 'open' }, alone)).toBeNull();
    expect(unreachableReason({ kind: 'channel', channel: 'release', to: [] }, reach)).toBeNull();
    expect(unreachableReason({ kind: 'channel', channel: 'solo', to: [] }, alone)).toBeNull();
    expect(unreachableReason({ kind: 'direct', to: [api] }, reach)).toBeNull();
    expect(unreachableReason({ kind: 'direct', to: [peers[2] as PeerRef] }, reach)).toBeNull();
  });
  it('refuses a channel message addressed to a non-member, as the send verb does (issue 10 item 7)', () => {
    expect(unreachableReason({ kind: 'channel', channel: 'ops', to: [peers[2] as PeerRef] }, reach)).toBeNull();
    expect(unreachableReason({ kind: 'channel', channel: 'ops', to: [peers[0] as PeerRef] }, reach)).toBe('Nick-alpha is not in #ops and would never see it (/invite @Nick-alpha #ops)');
  });
  it('says who will not see it now, in the send\'s words for a party it names', () => {
    expect(reachNote({ kind: 'open' }, reach, 'me')).toBeNull();
    expect(reachNote({ kind: 'open' }, alone, 'me')).toBe('nobody else is live for #open now; it waits in history for whoever comes');
    expect(reachNote({ kind: 'channel', channel: 'ops', to: [] }, reach, 'me')).toBe('seen now by Hana; it waits for 1 other member');
    expect(reachNote({ kind: 'channel', channel: 'release', to: [] }, reach, 'me')).toBe('nobody else in #release is live now; it waits in history for its 2 other members');
    expect(reachNote({ kind: 'channel', channel: 'solo', to: [] }, reach, 'me')).toBe('nobody else is in #solo yet; it waits in history (/invite @name #solo)');
    const allLive = { live: peers, members: () => ['me', 'sid-3'], now };
    expect(reachNote({ kind: 'channel', channel: 'ops', to: [] }, allLive, 'me')).toBeNull();
    const shown = peer('sid-s', 'Sam', 'agent', { delivery: { sensor: now, drain: null, chat: null, delivering: true } });
    expect(reachNote({ kind: 'direct', to: [shown] }, reach, 'me')).toBeNull();
    expect(reachNote({ kind: 'direct', to: [api] }, reach, 'me')).toBe('waits for api (gone), last seen 2h ago');
    expect(reachNote({ kind: 'direct', to: [peer('sid-b', 'bee', 'agent', { gone: true, host: 'bravo' })] }, reach, 'me')).toBe('held for bee@bravo by the hub until bravo is back');
  });
});

describe('a party that is not live, by the send\'s resolver (issue 21 item 1)', () => {
  const api = peer('11111111-aaaa-4bbb-8ccc-222222222222', 'api', 'agent', { gone: true, lastSeen: 1 });
  const gone = { book: bookOf(peers, [api, peer('ops-lead', 'ops-lead', 'human', { gone: true })]), channels: [], me: 'me' };
  it('@name of a party that ended resolves to it', () => {
    expect(resolveRoute('@api the schema changed', gone, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: api.id, gone: true }] }, body: 'the schema changed' });
    expect(resolveRoute('@human:ops-lead hi', gone, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'ops-lead' }] } });
    expect(resolveRoute('@11111111 hi', gone, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: api.id }] } });
  });
  it('an unknown name fails with the closest known names, gone ones marked', () => {
    expect(resolveRoute('@apu hi', gone, open)).toEqual({ ok: false, reason: 'nobody known is called @apu; did you mean @api (gone)? (Tab completes)', body: 'hi' });
  });
  it('a live party wins over a gone one of its name; two gone ones are ambiguous', () => {
    const web = peer('sid-web', 'web');
    const both = { book: bookOf([...peers, web], [peer('sid-old-web', 'web', 'agent', { gone: true })]), channels: [], me: 'me' };
    expect(resolveRoute('@web hi', both, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-web' }] } });
    const twoGone = { book: bookOf(peers, [peer('sid-x-1234567', 'old', 'agent', { gone: true }), peer('sid-y-1234567', 'old', 'agent', { gone: true })]), channels: [], me: 'me' };
    expect(resolveRoute('@old hi', twoGone, open)).toMatchObject({ ok: false, reason: expect.stringMatching(/^@old is ambiguous: old \(gone\) \(agent sid-x-12\), old \(gone\) \(agent sid-y-12\)/) });
  });
  it('@host:name names a party of another machine', () => {
    const bee = peer('sid-bee', 'bee', 'agent', { host: 'bravo' });
    const s = { book: bookOf([...peers, bee]), channels: [], me: 'me' };
    expect(resolveRoute('@bravo:bee hi', s, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-bee', host: 'bravo' }] }, body: 'hi' });
    expect(parseAddress('#tag:value is prose').tokens).toEqual([]);
  });
  it('Tab completes a known name', () => {
    expect(completeAt('@ap', 3, { ...gone, commands: [] }, null)?.text).toBe('@api ');
  });
});

describe('completeAt', () => {
  const cs = { ...src, commands: ['join', 'leave', 'help'] };
  it('completes a unique prefix', () => {
    const r = completeAt('@ha', 3, cs, null);
    expect(r?.text).toBe('@Hana ');
  });
  it('cycles through candidates on repeated Tab', () => {
    const a = completeAt('@nick', 5, cs, null);
    expect(a?.text).toBe('@Nick-alpha ');
    const b = completeAt(a!.text, a!.cursor, cs, a!.completion);
    expect(b?.text).toBe('@Nick-beta ');
    const c = completeAt(b!.text, b!.cursor, cs, b!.completion);
    expect(c?.text).toBe('@Nick-alpha ');
  });
  it('completes channels and commands, commands only at the start', () => {
    expect(completeAt('#re', 3, cs, null)?.text).toBe('#release ');
    expect(completeAt('/jo', 3, cs, null)?.text).toBe('/join ');
    expect(completeAt('x /jo', 5, cs, null)).toBeNull();
  });
  it('completes fuzzily, closest first: a typo, or a part of the name', () => {
    const s2 = { ...cs, book: bookOf([...peers, peer('sid-a', 'alpha')]) };
    expect(completeAt('@alpah', 6, s2, null)?.text).toBe('@alpha ');
    expect(completeAt('@hnaa', 5, s2, null)?.text).toBe('@Hana ');
    expect(completeAt('@beta', 5, s2, null)?.text).toBe('@Nick-beta ');
    expect(completeAt('#opz', 4, cs, null)?.text).toBe('#ops ');
  });
  it('never offers myself', () => {
    expect(completeAt('@me', 3, cs, null)?.text).not.toBe('@me ');
  });
});
