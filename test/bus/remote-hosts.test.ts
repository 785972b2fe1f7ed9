// Which machine a remote party is on (tools/bus/presence/remote.ts remoteHosts, known.ts
// remoteHostOf): the relay asks for every message to a tray, so the roster is indexed once per
// change of its file; each change is seen at the next ask. Over a real bus.
import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { type RemoteMember, remoteFile, remoteHosts, writeRemoteRoster } from '../../tools/bus/presence/remote.js';
import { remoteHostOf } from '../../tools/bus/presence/known.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const SID_A = '11111111-1111-4111-8111-111111111111';
const SID_B = '22222222-2222-4222-8222-222222222222';
const member = (id: string, host: string): RemoteMember => ({ id, kind: 'agent', name: id.slice(0, 4), origin: 'agent', host });

describe('remoteHosts', () => {
  it('names the host of each member, and follows every rewrite of the roster', () => {
    expect(remoteHostOf(bus.root, SID_A)).toBeUndefined();
    writeRemoteRoster(bus.root, { updated: 1, hosts: { box: { seen: 1, members: [member(SID_A, 'box')] } } });
    expect(remoteHostOf(bus.root, SID_A)).toBe('box');
    expect(remoteHostOf(bus.root, SID_B)).toBeUndefined();
    // The session moved to another machine, and a second one appeared: the same size of file.
    writeRemoteRoster(bus.root, { updated: 2, hosts: { cat: { seen: 2, members: [member(SID_A, 'cat')] }, dog: { seen: 2, members: [member(SID_B, 'dog')] } } });
    expect(remoteHostOf(bus.root, SID_A)).toBe('cat');
    expect(remoteHostOf(bus.root, SID_B)).toBe('dog');
    // A qualified id names its host whatever the roster says.
    expect(remoteHostOf(bus.root, 'elk:ann')).toBe('elk');
    // Gone, or torn by hand: nobody remote.
    rmSync(remoteFile(bus.root));
    expect(remoteHostOf(bus.root, SID_A)).toBeUndefined();
    writeFileSync(remoteFile(bus.root), '{"updated":3,"hosts":{"box":null,"cat":{"seen":3,"members":"x"}}}\n');
    expect(remoteHosts(bus.root).size).toBe(0);
    expect(remoteHostOf(bus.root, SID_A)).toBeUndefined();
  });
});
