// The channel merge (tools/relay/channel-sync.ts) on plain stores: each machine owns its
// members, kicks and dissolves travel, names from elsewhere are read with their host.
import { describe, expect, it } from 'vitest';
import { type ChannelStore, emptyStore, newChannel } from '../../tools/bus/channels/membership.js';
import { applySnapshot, parseHostChannels, snapshotOf } from '../../tools/relay/channel-sync.js';

const ANT = '00000000-0000-4000-8000-00000000000a';
const BEE = '00000000-0000-4000-8000-00000000000b';
const valid = () => true;
// Read through a function: a `delete` in a test narrows a direct property access to never.
const opsOf = (s: ChannelStore) => s.channels.ops;

function storeWith(name: string, created: number, members: Record<string, { kind: 'agent' | 'human'; joined: number }>): ChannelStore {
  const s = emptyStore();
  s.channels[name] = { ...newChannel(created, ANT), members: { ...members } };
  return s;
}

/** Exchange views until nothing changes (what the relays do over the bucket). */
function converge(stores: Record<string, ChannelStore>): void {
  for (let round = 0; round < 5; round++) {
    let changed = false;
    for (const [from, s] of Object.entries(stores)) {
      const snap = JSON.parse(JSON.stringify(snapshotOf(s, from, new Map()))) as ReturnType<typeof snapshotOf>;
      for (const [to, t] of Object.entries(stores)) if (to !== from) changed = applySnapshot(t, snap, from, to, valid).changed || changed;
    }
    if (!changed) return;
  }
  throw new Error('did not converge');
}

describe('channel state across machines', () => {
  it('each machine owns its members; usernames elsewhere are qualified, session ids are not', () => {
    const alpha = storeWith('ops', 100, { [ANT]: { kind: 'agent', joined: 100 }, tester: { kind: 'human', joined: 101 } });
    const bravo = storeWith('ops', 150, { [BEE]: { kind: 'agent', joined: 150 }, tester: { kind: 'human', joined: 151 } });
    converge({ alpha, bravo });
    expect(Object.keys(alpha.channels.ops!.members).sort()).toEqual([ANT, BEE, 'bravo:tester', 'tester'].sort());
    expect(alpha.channels.ops!.members['bravo:tester']).toMatchObject({ host: 'bravo', kind: 'human' });
    expect(alpha.channels.ops!.members.tester!.host).toBeUndefined();
    expect(bravo.channels.ops!.members['alpha:tester']).toMatchObject({ host: 'alpha' });
    // The earliest creation names the creator everywhere.
    expect(bravo.channels.ops!.created).toBe(100);
    // bee leaves on bravo: alpha drops it on bravo's next view.
    delete bravo.channels.ops!.members[BEE];
    converge({ alpha, bravo });
    expect(alpha.channels.ops!.members[BEE]).toBeUndefined();
  });

  it('a kick reaches the member on its own machine; a later join stays', () => {
    const alpha = storeWith('ops', 100, { [ANT]: { kind: 'agent', joined: 100 } });
    const bravo = emptyStore();
    bravo.channels.ops = { ...newChannel(120), members: { [BEE]: { kind: 'agent', joined: 120 } } };
    converge({ alpha, bravo });
    expect(alpha.channels.ops!.members[BEE]?.host).toBe('bravo');
    delete alpha.channels.ops!.members[BEE];
    alpha.channels.ops!.removed = { [BEE]: 200 };
    converge({ alpha, bravo });
    expect(bravo.channels.ops!.members[BEE]).toBeUndefined();
    expect(alpha.channels.ops!.members[BEE]).toBeUndefined();
    bravo.channels.ops!.members[BEE] = { kind: 'agent', joined: 300 };
    converge({ alpha, bravo });
    expect(alpha.channels.ops!.members[BEE]).toMatchObject({ host: 'bravo', joined: 300 });
  });

  it('a dissolve travels, removes older channels of the name, and an older view cannot bring one back', () => {
    const alpha = storeWith('ops', 100, { [ANT]: { kind: 'agent', joined: 100 } });
    const bravo = storeWith('ops', 110, { [BEE]: { kind: 'agent', joined: 110 } });
    converge({ alpha, bravo });
    const stale = JSON.parse(JSON.stringify(snapshotOf(bravo, 'bravo', new Map()))) as ReturnType<typeof snapshotOf>;
    delete alpha.channels.ops;
    alpha.dissolved = { ops: { at: 500, by: ANT } };
    const r = applySnapshot(bravo, snapshotOf(alpha, 'alpha', new Map()), 'alpha', 'bravo', valid);
    expect(r.dissolved).toEqual(['ops']);
    expect(bravo.channels.ops).toBeUndefined();
    expect(applySnapshot(alpha, stale, 'bravo', 'alpha', valid).created).toEqual([]);
    expect(alpha.channels.ops).toBeUndefined();
    // Made again later, it is a new channel and travels as one.
    bravo.channels.ops = { ...newChannel(900, BEE), members: { [BEE]: { kind: 'agent', joined: 900 } } };
    converge({ alpha, bravo });
    expect(opsOf(alpha)?.members[BEE]).toMatchObject({ host: 'bravo' });
  });

  it('the newer description wins; an invitation goes once the invitee joined anywhere', () => {
    const alpha = storeWith('ops', 100, { [ANT]: { kind: 'agent', joined: 100 } });
    const bravo = emptyStore();
    converge({ alpha, bravo });
    alpha.channels.ops!.invites[BEE] = { by: ANT, at: 150 };
    converge({ alpha, bravo });
    expect(bravo.channels.ops!.invites[BEE]).toEqual({ by: ANT, at: 150 });
    bravo.channels.ops!.description = 'from bravo';
    bravo.channels.ops!.describedAt = 200;
    delete bravo.channels.ops!.invites[BEE];
    bravo.channels.ops!.members[BEE] = { kind: 'agent', joined: 210 };
    converge({ alpha, bravo });
    expect(alpha.channels.ops).toMatchObject({ description: 'from bravo', describedAt: 200 });
    expect(alpha.channels.ops!.invites).toEqual({});
  });

  it('takes what another machine says as data: ids outside the value class and unprintable text are dropped', () => {
    const alpha = storeWith('ops', 100, { [ANT]: { kind: 'agent', joined: 100 } });
    const hostile = {
      v: 1 as const,
      host: 'bravo',
      dissolved: {},
      channels: {
        ops: {
          created: 100,
          description: 'line one\nline two',
          describedAt: 999,
          pinned: false,
          members: { 'evil|to:*': { kind: 'human' as const, joined: 1 }, [BEE]: { kind: 'agent' as const, joined: 120, name: 'bee\u202e' } },
          invites: { 'x\ny': { by: ANT, at: 5 } },
        },
      },
    };
    applySnapshot(alpha, hostile, 'bravo', 'alpha', valid);
    const ops = opsOf(alpha)!;
    expect(Object.keys(ops.members).sort()).toEqual([ANT, BEE].sort());
    expect(ops.members[BEE]!.name).toBeUndefined();
    expect(ops.description).toBe('');
    expect(ops.invites).toEqual({});
  });

  it('refuses a view that does not parse or claims another host', () => {
    const text = JSON.stringify(snapshotOf(emptyStore(), 'alpha', new Map()));
    expect(parseHostChannels(text, 'alpha')).not.toBeNull();
    expect(parseHostChannels(text, 'bravo')).toBeNull();
    expect(parseHostChannels('{"v":1,"host":"alpha","channels":{"x":{}},"dissolved":{}}', 'alpha')).toBeNull();
    expect(parseHostChannels('not json', 'alpha')).toBeNull();
  });
});
