// The channel push names parties by the one rule (tools/wire/display.ts, issue 19): its loop
// hands pushPending cached live names, and a party that ended must still read `api (gone)`,
// as in the sensor and the drain (docs/architecture.md, "Addressing"). In-process, on a real
// temporary bus.

import { describe, expect, it } from 'vitest';
import { rememberParties } from '../../tools/bus/presence/names.js';
import { writeSignal } from '../../tools/bus/store/messages.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { type ChannelNotice, pushPending } from '../../tools/mcp/channel.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import { type TempBus, useFamilyPolicy, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
// Names in the channel push, not permissions: these sessions have no lineage.
useTempBus((b) => {
  bus = b;
  useFamilyPolicy(b);
});

const API = '00000000-0000-4000-8000-0000000000a1';
const READER = '00000000-0000-4000-8000-0000000000b2';

describe('channel push names', () => {
  it.each([
    ['the loop’s cached live names', true],
    ['names read in the wake', false],
  ])('a sender that ended reads by its last name, marked gone, with %s', (_what, cached) => {
    const ctx = createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid });
    const root = ctx.root();
    rememberParties(root, [{ id: API, name: 'api', kind: 'agent', origin: '/srv/api' }], Date.now());
    const id = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random })();
    writeSignal(root, { kind: 'open' }, id, { from: `claude:${API}`, project: 'api', cwd: '/srv/api', fromKind: 'agent', fromId: API, to: '*', body: 'schema changed' });
    const who: Identity = { resolved: true, reason: 'test', kind: 'agent', id: READER, from: `claude:${READER}`, origin: '/srv/web', user: 'tester', sessionId: READER };
    const notices: ChannelNotice[] = [];
    const consumed = pushPending(ctx, who, { emit: (n) => void notices.push(n), warn: () => {}, ...(cached ? { names: () => new Map() } : {}) });
    expect(consumed).toContain(id);
    expect(notices.map((n) => n.content).join('\n')).toContain('message from api (gone) (agent, to #open): schema changed');
  });
});
