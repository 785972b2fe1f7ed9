// The permission check (issue 14 §2) as a pure function: one table, every rule.
import { describe, expect, it } from 'vitest';
import { type Delivery, type Grant, type Graph, type Join, type Lineage, type Policy, DEFAULT_POLICY, depthOf, indexPolicy, permit, permitJoin, sameGroup } from '../../tools/wire/permit.js';

// aaron (human) → lead1 → w1, w2 ; aaron → lead2 → w3 → w3a → w3b (four levels below aaron).
// aaron is the person of this bus; `box:ann` a person of another machine (verified there).
const parents: Record<string, string> = { lead1: 'aaron', lead2: 'aaron', w1: 'lead1', w2: 'lead1', w3: 'lead2', w3a: 'w3', w3b: 'w3a' };
const people = new Set(['aaron', 'box:ann']);
const lineage: Graph = { parentOf: (id) => parents[id], isPerson: (id) => people.has(id) };
const groups = (over: Partial<Policy> = {}) => indexPolicy({ ...DEFAULT_POLICY, ...over });
const ops = new Set(['w1', 'w3']);
const open = { open: true } as const;

type Row = [string, Delivery, Partial<Policy>, boolean, RegExp];
const agent = (from: string, to: string, where?: Delivery['where']): Delivery => ({ from, fromKind: 'agent', to, where });
const human = (from: string, to: string, where?: Delivery['where']): Delivery => ({ from, fromKind: 'human', to, where });

const rows: Row[] = [
  ['self', agent('w1', 'w1'), {}, true, /self/],
  ['parent → child', agent('lead1', 'w1'), {}, true, /same group/],
  ['child → parent', agent('w1', 'lead1'), {}, true, /same group/],
  ['siblings', agent('w1', 'w2'), {}, true, /same group/],
  ['top-level siblings (the person’s children)', agent('lead1', 'lead2'), {}, true, /same group/],
  ['the person → its child session', human('aaron', 'lead1'), {}, true, /a person reaches every node/],
  ['child session → its person', agent('lead1', 'aaron'), {}, true, /every node reaches a person/],
  ['the person reaches a grandchild', human('aaron', 'w3b'), {}, true, /a person reaches every node/],
  ['a grandchild reaches the person', agent('w3b', 'aaron'), {}, true, /every node reaches a person/],
  ['a person of another machine reaches a worker', human('box:ann', 'w1'), {}, true, /a person reaches every node/],
  ['a worker reaches a person of another machine', agent('w1', 'box:ann'), {}, true, /every node reaches a person/],
  ['cousins, no grant', agent('w1', 'w3'), {}, false, /no grant from w1 to w3 \(different groups\)/],
  ['cousins, with a grant', agent('w1', 'w3'), { allow: [{ from: 'w1', to: 'w3' }] }, true, /grant w1 → w3/],
  ['a grant is one way', agent('w3', 'w1'), { allow: [{ from: 'w1', to: 'w3' }] }, false, /no grant/],
  ['a worker → its parent’s sibling is another group', agent('w1', 'lead2'), {}, false, /no grant from w1 to lead2/],
  ['grandchild → grandparent is another group', agent('w3a', 'lead2'), {}, false, /no grant/],
  ['an agent with no recorded parent (a declared harness) → a session', agent('codex-1', 'lead1'), {}, false, /no grant from codex-1/],
  ['a deny beats the group', agent('w1', 'w2'), { deny: [{ from: 'w1', to: 'w2' }] }, false, /deny w1 → w2/],
  ['a deny beats reaching the person', agent('w1', 'aaron'), { deny: [{ from: 'w1', to: 'aaron' }] }, false, /deny w1 → aaron/],
  ['family mode: cousins talk', agent('w1', 'w3'), { mode: 'family' }, true, /family/],
  ['family mode: a stranger is refused', { from: 'mallory', fromKind: 'unknown', to: 'w1' }, { mode: 'family' }, false, /mallory is a stranger/],
  ['a stranger with a grant by name', { from: 'mallory', fromKind: 'unknown', to: 'w1' }, { allow: [{ from: 'mallory', to: 'w1' }] }, true, /grant/],
  // attack 6: only the person of this bus (or a verified person of another machine) is a person.
  ['a "human" that is not the person of this bus is a stranger', human('boss', 'w1'), {}, false, /boss claims to be a person, but is not the person of this bus/],
  ['... in family mode too', human('boss', 'w3'), { mode: 'family' }, false, /boss claims to be a person/],
  ['... and in #open', human('boss', '*', open), { open: 'everyone' }, false, /boss claims to be a person/],
  ['... and it does not reach the person either', human('boss', 'aaron'), {}, false, /boss claims to be a person/],
  ['channel member posts', agent('w1', 'w3', { channel: 'ops', members: ops }), {}, true, /member of #ops/],
  ['channel non-member is refused', agent('w2', 'w3', { channel: 'ops', members: ops }), {}, false, /w2 is not a member of #ops/],
  ['channel non-member with a grant to it', agent('w2', 'w3', { channel: 'ops', members: ops }), { allow: [{ from: 'w2', to: '#ops' }] }, true, /grant w2 → #ops/],
  ['family mode: a non-member posts in a channel', agent('w2', 'w3', { channel: 'ops', members: ops }), { mode: 'family' }, true, /family/],
  ['a person posts in any channel', human('aaron', 'w3', { channel: 'ops', members: ops }), {}, true, /a person posts in any channel/],
  ['a deny for a channel', agent('w1', 'w3', { channel: 'ops', members: ops }), { deny: [{ from: 'w1', to: '#ops' }] }, false, /deny w1 → #ops/],
  // #open, default `top`: people and the sessions a person started.
  ['#open (default): a top-level session posts', agent('lead1', '*', open), {}, true, /top-level session/],
  ['#open (default): a worker does not', agent('w1', '*', open), {}, false, /only people and top-level sessions post to #open, and w1 was started by lead1, not by a person/],
  ['#open (default): nor a node with no recorded parent', agent('codex-1', '*', open), {}, false, /codex-1 has no recorded parent/],
  ['#open (default): a worker with a grant to #open', agent('w1', '*', open), { allow: [{ from: 'w1', to: '#open' }] }, true, /grant w1 → #open/],
  ['#open (default): the person', human('aaron', '*', open), {}, true, /a person posts to #open/],
  ['#open: everyone', agent('w3b', '*', open), { open: 'everyone' }, true, /everyone/],
  ['#open: family lets any agent', agent('w3b', '*', open), { open: 'family' }, true, /family/],
  ['#open: humans only refuses an agent', agent('lead1', '*', open), { open: 'humans' }, false, /only humans/],
  ['#open: humans only lets a person', human('aaron', '*', open), { open: 'humans' }, true, /a person/],
  ['#open: humans only, a grant still lets one agent', agent('w1', '*', open), { open: 'humans', allow: [{ from: 'w1', to: '#open' }] }, true, /grant/],
  ['#open: granted, with a grant', agent('w1', '*', open), { open: 'granted', allow: [{ from: 'w1', to: '#open' }] }, true, /grant/],
  ['#open: granted, without', agent('lead1', '*', open), { open: 'granted' }, false, /no grant/],
];

describe('permit', () => {
  it('the default is groups, #open posted by people and top-level sessions (seed 000 D4, issue 20)', () => {
    expect(DEFAULT_POLICY).toEqual({ version: 1, mode: 'groups', open: 'top', maxDepth: 8, allow: [], deny: [] });
  });

  it.each(rows)('%s', (_name, d, over, ok, rule) => {
    const v = permit(d, groups(over), lineage);
    expect(v.ok).toBe(ok);
    expect(v.rule).toMatch(rule);
  });

  it('groups are a parent and its direct children; depth is data, four levels deep', () => {
    expect(sameGroup('w3', 'w3a', lineage)).toBe(true);
    expect(sameGroup('w3', 'w3b', lineage)).toBe(false);
    expect(depthOf('w3b', lineage, 8)).toBe(4);
    expect(depthOf('aaron', lineage, 8)).toBe(0);
  });

  it('a lineage cycle in hand-edited files cannot loop forever', () => {
    const loop: Lineage = { parentOf: (id) => (id === 'a' ? 'b' : 'a') };
    expect(depthOf('a', loop, 8)).toBe(9);
  });

  it('1,000 grants: the check is a set lookup (correct at both ends of the list)', () => {
    const allow: Grant[] = Array.from({ length: 1000 }, (_, i) => ({ from: `s${i}`, to: `r${i}` }));
    const ix = groups({ allow });
    expect(permit(agent('s0', 'r0'), ix, lineage).ok).toBe(true);
    expect(permit(agent('s999', 'r999'), ix, lineage).ok).toBe(true);
    expect(permit(agent('s999', 'r0'), ix, lineage).ok).toBe(false);
  });
});

// attack 7: joining an existing channel in groups mode.
describe('permitJoin', () => {
  const j = (who: string, members: string[], over: Partial<Join> = {}): Join => ({ who, kind: 'agent', channel: 'review', members: new Set(members), invited: false, ...over });
  const joinRows: [string, Join, Partial<Policy>, boolean, RegExp][] = [
    ['another group’s channel: refused', j('w1', ['lead2', 'w3']), {}, false, /#review has no member of w1's group, and w1 has no invitation or grant to it/],
    ['invited', j('w1', ['lead2', 'w3'], { invited: true }), {}, true, /invited/],
    ['a grant to the channel', j('w1', ['lead2', 'w3']), { allow: [{ from: 'w1', to: '#review' }] }, true, /grant w1 → #review/],
    ['a sibling is a member', j('w1', ['w2', 'w3']), {}, true, /w2, of w1's group, is a member/],
    ['its parent is a member', j('w1', ['lead1']), {}, true, /lead1, of w1's group/],
    ['a top-level session joins where the person is', j('lead2', ['aaron']), {}, true, /aaron, of lead2's group/],
    ['a worker does not join where only the person is', j('w1', ['aaron']), {}, false, /no member of w1's group/],
    ['an empty channel it did not make', j('w1', []), {}, false, /no member/],
    ['its own empty channel', j('w1', [], { createdBy: 'w1' }), {}, true, /the creator/],
    ['an empty channel its sibling made', j('w1', [], { createdBy: 'w2' }), {}, true, /w2, of w1's group, made #review/],
    ['an empty channel the person made: a top-level session joins', j('lead1', [], { createdBy: 'aaron' }), {}, true, /aaron, of lead1's group, made/],
    ['an empty channel the person made: a worker does not', j('w1', [], { createdBy: 'aaron' }), {}, false, /no member of w1's group/],
    ['already a member', j('w1', ['w1', 'w3']), {}, true, /already a member/],
    ['the person joins anything', j('aaron', ['w3'], { kind: 'human' }), {}, true, /a person joins any channel/],
    ['a "human" that is not the person does not', j('boss', ['w3'], { kind: 'human' }), {}, false, /no member of boss's group/],
    ['family mode: anyone joins', j('w1', ['w3']), { mode: 'family' }, true, /family/],
    ['a deny to the channel beats an invitation', j('w1', ['w3'], { invited: true }), { deny: [{ from: 'w1', to: '#review' }] }, false, /deny w1 → #review/],
  ];
  it.each(joinRows)('%s', (_name, join, over, ok, rule) => {
    const v = permitJoin(join, groups(over), lineage);
    expect(v.ok).toBe(ok);
    expect(v.rule).toMatch(rule);
  });
});
