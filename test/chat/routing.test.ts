import { describe, expect, it } from 'vitest';
import { completeAt, editDistance, matchName, parseAddress, type PeerRef, reachNote, resolveRoute, type RouteSources, unreachableReason } from '../../tools/chat/state/routing.js';

const peers: PeerRef[] = [
  { id: 'sid-1', name: 'Nick-alpha', kind: 'agent' },
  { id: 'sid-2', name: 'Nick-beta', kind: 'agent' },
  { id: 'sid-3', name: 'Hana', kind: 'agent' },
  { id: 'aaron', name: 'aaron', kind: 'human' },
  { id: 'me', name: 'me', kind: 'human' },
];
const src: RouteSources = { peers, channels: ['ops', 'release'], me: 'me' };
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
    const agents: PeerRef[] = [{ id: '0123456789ab', name: 'x', kind: 'agent' }, { id: '0123456700cd', name: 'y', kind: 'agent' }];
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
    const s2: RouteSources = { peers: [...peers, { id: 'sid-a', name: 'alpha', kind: 'agent' }, { id: 'sid-b', name: 'bet', kind: 'agent' }], channels: ['ops'], me: 'me' };
    expect(resolveRoute('@alpah hi', s2, open)).toEqual({ ok: false, reason: 'nobody live is called @alpah; did you mean @alpha? (Tab completes)', body: 'hi' });
    expect(resolveRoute('@bex hi', s2, open)).toEqual({ ok: false, reason: 'nobody live is called @bex; did you mean @bet? (Tab completes)', body: 'hi' });
    expect(resolveRoute('@Hnaa hi', src, open)).toMatchObject({ ok: false, reason: 'nobody live is called @Hnaa; did you mean @Hana? (Tab completes)' });
    expect(resolveRoute('#opz deploying', src, open)).toEqual({ ok: false, reason: 'no channel #opz; did you mean #ops? (Tab completes)', body: 'deploying' });
    expect(resolveRoute('#zzzz x', src, open)).toMatchObject({ ok: false, reason: 'no channel #zzzz; channels: #ops, #release' });
    expect(resolveRoute('#rel x', src, open)).toMatchObject({ ok: true, dest: { kind: 'channel', channel: 'release' } });
  });
  it('a human and an agent with the same name are ambiguous, the operator included (issue 10 item 10)', () => {
    const twins: RouteSources = { peers: [...peers, { id: 'alpha', name: 'alpha', kind: 'human' }, { id: 'sid-alpha-1234', name: 'alpha', kind: 'agent' }], channels: [], me: 'me' };
    expect(resolveRoute('@alpha hi', twins, open)).toMatchObject({
      ok: false,
      reason: "@alpha is ambiguous: alpha (human), alpha (agent sid-alph); @human:<username> names the person, @ and 8 or more characters of an agent's id the agent",
    });
    expect(resolveRoute('@human:alpha hi', twins, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'alpha', kind: 'human' }] }, body: 'hi' });
    expect(resolveRoute('@human:nobody hi', twins, open)).toMatchObject({ ok: false, reason: expect.stringContaining('no live human called nobody') });
    expect(resolveRoute('@human:me hi', twins, open)).toMatchObject({ ok: false, reason: '@human:me is you' });
    expect(resolveRoute('@sid-alpha hi', twins, open)).toMatchObject({ ok: true, dest: { kind: 'direct', to: [{ id: 'sid-alpha-1234' }] } });
    const mine: RouteSources = { peers: [...peers, { id: 'sid-me-agent', name: 'ME', kind: 'agent' }], channels: [], me: 'me' };
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
  const reach = { live: peers, members: (c: string) => (c === 'ops' ? ['me', 'sid-3', 'gone-1'] : c === 'release' ? ['me', 'gone-1', 'gone-2'] : ['me']) };
  const alone = { live: [peers[4] as PeerRef], members: reach.members };
  it('refuses only a direct message to someone who is not live', () => {
    expect(unreachableReason({ kind: 'open' }, alone, 'me')).toBeNull();
    expect(unreachableReason({ kind: 'channel', channel: 'release', to: [] }, reach, 'me')).toBeNull();
    expect(unreachableReason({ kind: 'channel', channel: 'solo', to: [] }, alone, 'me')).toBeNull();
    expect(unreachableReason({ kind: 'direct', to: [{ id: 'gone', name: 'Gone', kind: 'agent' }] }, reach, 'me')).toBe('Gone is not live; the draft is kept');
    expect(unreachableReason({ kind: 'channel', channel: 'ops', to: [{ id: 'gone', name: 'Gone', kind: 'agent' }] }, reach, 'me')).toContain('Gone is not live');
    expect(unreachableReason({ kind: 'direct', to: [peers[2] as PeerRef] }, reach, 'me')).toBeNull();
  });
  it('refuses a channel message addressed to a non-member, as the send verb does (issue 10 item 7)', () => {
    expect(unreachableReason({ kind: 'channel', channel: 'ops', to: [peers[2] as PeerRef] }, reach, 'me')).toBeNull();
    expect(unreachableReason({ kind: 'channel', channel: 'ops', to: [peers[0] as PeerRef] }, reach, 'me')).toBe('Nick-alpha is not in #ops and would never see it (/invite @Nick-alpha #ops)');
  });
  it('says who will not see it now', () => {
    expect(reachNote({ kind: 'open' }, reach, 'me')).toBeNull();
    expect(reachNote({ kind: 'open' }, alone, 'me')).toBe('nobody else is live for #open now; it waits in history for whoever comes');
    expect(reachNote({ kind: 'channel', channel: 'ops', to: [] }, reach, 'me')).toBe('seen now by Hana; it waits for 1 other member');
    expect(reachNote({ kind: 'channel', channel: 'release', to: [] }, reach, 'me')).toBe('nobody else in #release is live now; it waits in history for its 2 other members');
    expect(reachNote({ kind: 'channel', channel: 'solo', to: [] }, reach, 'me')).toBe('nobody else is in #solo yet; it waits in history (/invite @name #solo)');
    const allLive = { live: peers, members: () => ['me', 'sid-3'] };
    expect(reachNote({ kind: 'channel', channel: 'ops', to: [] }, allLive, 'me')).toBeNull();
    expect(reachNote({ kind: 'direct', to: [peers[2] as PeerRef] }, reach, 'me')).toBeNull();
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
    const s2 = { ...cs, peers: [...peers, { id: 'sid-a', name: 'alpha', kind: 'agent' as const }] };
    expect(completeAt('@alpah', 6, s2, null)?.text).toBe('@alpha ');
    expect(completeAt('@hnaa', 5, s2, null)?.text).toBe('@Hana ');
    expect(completeAt('@beta', 5, s2, null)?.text).toBe('@Nick-beta ');
    expect(completeAt('#opz', 4, cs, null)?.text).toBe('#ops ');
  });
  it('never offers myself', () => {
    expect(completeAt('@me', 3, cs, null)?.text).not.toBe('@me ');
  });
});
