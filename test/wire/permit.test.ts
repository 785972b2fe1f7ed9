// The permission check (issue 14 §2) as a pure function: one table, every rule.
import { describe, expect, it } from 'vitest';
import { type Delivery, type Grant, type Lineage, type Policy, DEFAULT_POLICY, depthOf, indexPolicy, permit, sameGroup } from '../../tools/wire/permit.js';

// aaron (human) → lead1 → w1, w2 ; aaron → lead2 → w3 → w3a → w3b (four levels below aaron)
const parents: Record<string, string> = { lead1: 'aaron', lead2: 'aaron', w1: 'lead1', w2: 'lead1', w3: 'lead2', w3a: 'w3', w3b: 'w3a' };
const lineage: Lineage = { parentOf: (id) => parents[id] };
const groups = (over: Partial<Policy> = {}) => indexPolicy({ ...DEFAULT_POLICY, mode: 'groups', ...over });
const ops = new Set(['w1', 'w3']);

type Row = [string, Delivery, Partial<Policy>, boolean, RegExp];
const agent = (from: string, to: string, where?: Delivery['where']): Delivery => ({ from, fromKind: 'agent', to, where });

const rows: Row[] = [
  ['self', agent('w1', 'w1'), {}, true, /self/],
  ['parent → child', agent('lead1', 'w1'), {}, true, /same group/],
  ['child → parent', agent('w1', 'lead1'), {}, true, /same group/],
  ['siblings', agent('w1', 'w2'), {}, true, /same group/],
  ['human → its child session', { from: 'aaron', fromKind: 'human', to: 'lead1' }, {}, true, /human owner/],
  ['child session → its human', agent('lead1', 'aaron'), {}, true, /same group/],
  ['a human reaches a grandchild', { from: 'aaron', fromKind: 'human', to: 'w3b' }, {}, true, /human owner/],
  ['a grandchild does not reach the human', agent('w3b', 'aaron'), {}, false, /no grant/],
  ['cousins, no grant', agent('w1', 'w3'), {}, false, /no grant from w1 to w3/],
  ['cousins, with a grant', agent('w1', 'w3'), { allow: [{ from: 'w1', to: 'w3' }] }, true, /grant w1 → w3/],
  ['a grant is one way', agent('w3', 'w1'), { allow: [{ from: 'w1', to: 'w3' }] }, false, /no grant/],
  ['grandchild → grandparent is another group', agent('w3a', 'lead2'), {}, false, /no grant/],
  ['a deny beats the group', agent('w1', 'w2'), { deny: [{ from: 'w1', to: 'w2' }] }, false, /deny w1 → w2/],
  ['family mode: cousins talk', agent('w1', 'w3'), { mode: 'family' }, true, /family/],
  ['family mode: a stranger is refused', { from: 'mallory', fromKind: 'unknown', to: 'w1' }, { mode: 'family' }, false, /stranger/],
  ['a stranger with a grant by name', { from: 'mallory', fromKind: 'unknown', to: 'w1' }, { allow: [{ from: 'mallory', to: 'w1' }] }, true, /grant/],
  ['channel member posts', agent('w1', 'w3', { channel: 'ops', members: ops }), {}, true, /member of #ops/],
  ['channel non-member is refused', agent('w2', 'w3', { channel: 'ops', members: ops }), {}, false, /not a member of #ops/],
  ['family mode: a non-member posts in a channel', agent('w2', 'w3', { channel: 'ops', members: ops }), { mode: 'family' }, true, /family/],
  ['a human posts in any channel', { from: 'aaron', fromKind: 'human', to: 'w3', where: { channel: 'ops', members: ops } }, {}, true, /human/],
  ['a deny for a channel', agent('w1', 'w3', { channel: 'ops', members: ops }), { deny: [{ from: 'w1', to: '#ops' }] }, false, /deny w1 → #ops/],
  ['#open: everyone (default)', agent('w3b', '*', { open: true }), {}, true, /everyone/],
  ['#open: humans only refuses an agent', agent('w1', '*', { open: true }), { open: 'humans' }, false, /only humans/],
  ['#open: humans only lets a human', { from: 'aaron', fromKind: 'human', to: '*', where: { open: true } }, { open: 'humans' }, true, /humans/],
  ['#open: granted, with a grant', agent('w1', '*', { open: true }), { open: 'granted', allow: [{ from: 'w1', to: '#open' }] }, true, /grant/],
  ['#open: granted, without', agent('w1', '*', { open: true }), { open: 'granted' }, false, /no grant/],
];

describe('permit', () => {
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
