// The roster poller (tools/chat/source/roster.ts) over the chat's real actions on a temporary
// bus, on stepped timers: who is live and the channel store, re-read every everyMs and on
// demand; a read that fails is said, and who is live still updates when only the channels fail.

import { describe, expect, it } from 'vitest';
import { writePresence } from '../../../tools/bus/presence/index.js';
import { createChatActions } from '../../../tools/chat/actions.js';
import type { ChannelInfo } from '../../../tools/chat/actions.js';
import { createRosterPoller } from '../../../tools/chat/source/roster.js';
import { createVerbCtx } from '../../../tools/verbs/context.js';
import { ME, type TempBus, runInProcess, useTempBus } from '../../helpers/temp-bus.js';
import { manualTimers } from '../../helpers/timers.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function actions() {
  const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: 'tester' });
  return createChatActions({ makeCtx, root: makeCtx().root(), now: Date.now });
}

describe('chat roster poller', () => {
  it('reads who is live and the channels at refresh and every everyMs until stopped', async () => {
    const timers = manualTimers();
    const seen = { peers: [] as string[][], channels: [] as ChannelInfo[][], failed: [] as string[] };
    const poller = createRosterPoller({
      read: actions(),
      timers,
      everyMs: 500,
      peers: (ps) => seen.peers.push(ps.map((p) => p.id)),
      channels: (cs) => seen.channels.push(cs),
      failed: (t) => seen.failed.push(t),
    });
    expect(poller.refresh()).toBe(true);
    expect(seen.peers).toEqual([[]]);
    expect(seen.channels).toEqual([[]]);
    poller.start();
    // A person in another chat, and a declared agent (no process behind it) in #ops.
    writePresence(bus.root, { id: 'ops-lead', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
    expect((await runInProcess(['join', 'ops'], { env: { ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-roster' } })).exitCode).toBe(0);
    timers.advance(499);
    expect(seen.peers).toHaveLength(1);
    timers.advance(1);
    expect(seen.peers.at(-1)).toEqual(['ops-lead']);
    expect(seen.channels.at(-1)).toEqual([{ name: 'ops', members: [`bot.unit-roster@${ME}`] }]);
    poller.stop();
    timers.advance(5000);
    expect(seen.peers).toHaveLength(2);
    expect(seen.failed).toEqual([]);
  });

  it('says when the roster cannot be read; the peers are still told when only the channels fail', () => {
    const timers = manualTimers();
    const real = actions();
    let broken: 'peers' | 'channels' | null = 'channels';
    const seen = { peers: 0, channels: 0, failed: [] as string[] };
    const poller = createRosterPoller({
      read: {
        peers: () => (broken === 'peers' ? fail() : real.peers()),
        channels: () => (broken === 'channels' ? fail() : real.channels()),
      },
      timers,
      peers: () => seen.peers++,
      channels: () => seen.channels++,
      failed: (t) => seen.failed.push(t),
    });
    expect(poller.refresh()).toBe(false);
    expect(seen).toEqual({ peers: 1, channels: 0, failed: ['cannot read the roster: EIO: the disk went away'] });
    broken = 'peers';
    expect(poller.refresh()).toBe(false);
    expect(seen.peers).toBe(1);
    broken = null;
    expect(poller.refresh()).toBe(true);
    expect(seen).toMatchObject({ peers: 2, channels: 1 });
  });
});

function fail(): never {
  throw new Error('EIO: the disk went away');
}
