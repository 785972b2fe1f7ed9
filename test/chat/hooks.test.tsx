// The chat's subscription hooks (tools/chat/hooks/) through ink-testing-library, each in a
// probe component that prints what the hook returns, on a real temporary bus: each
// subscribes on mount, delivers into its state, and lets go on unmount.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { type Dispatch, useReducer, useState } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePresence } from '../../tools/bus/presence/index.js';
import type { ChatActions } from '../../tools/chat/actions.js';
import { createChatActions } from '../../tools/chat/actions.js';
import { type BusSource, createBusSource } from '../../tools/chat/bus-source.js';
import { useBusMessages } from '../../tools/chat/hooks/use-bus-messages.js';
import { FIRST_PAGE, useHistory, useScrollBack } from '../../tools/chat/hooks/use-history.js';
import { usePeers } from '../../tools/chat/hooks/use-peers.js';
import { type FeedAction, feedReducer, initialFeed } from '../../tools/chat/state/feed.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { ME, makeTempBus, runInProcess, type TempBus, useFamilyPolicy, waitFor } from '../helpers/temp-bus.js';
import { ids, put } from '../helpers/fixtures.js';
import { manualTimers } from '../helpers/timers.js';

let bus: TempBus;
let unmounts: (() => void)[] = [];
/** The person at the keyboard: the one who wrote the human messages of `put`. */
const PERSON = { id: ME, kind: 'human' as const, user: ME };
beforeEach(() => {
  bus = makeTempBus();
  // The hooks, not permissions: a declared agent (no lineage) posts to #open as under family.
  useFamilyPolicy(bus);
  unmounts = [];
});
afterEach(() => {
  for (const u of unmounts) u();
  bus.cleanup();
});

const agentEnv = () => ({ ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-hooks' });

function actions(): ChatActions {
  const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: 'tester' });
  return createChatActions({ makeCtx, root: makeCtx().root(), now: Date.now });
}

/** A source that counts its subscriptions. */
function counted(src: BusSource): BusSource & { starts: number; stops: number } {
  const c = {
    ...src,
    starts: 0,
    stops: 0,
    start: (ev: Parameters<BusSource['start']>[0]) => {
      c.starts++;
      src.start(ev);
    },
    stop: () => {
      c.stops++;
      src.stop();
    },
  };
  return c;
}

function mount(node: React.ReactElement) {
  const inst = render(node);
  unmounts.push(() => inst.unmount());
  const frame = () => inst.lastFrame() ?? '';
  const until = async (pred: (f: string) => boolean, what: string) => {
    try {
      return await waitFor(() => pred(frame()) && frame(), { what, timeoutMs: 5000 });
    } catch (err) {
      throw new Error(`${(err as Error).message}; last frame:\n${frame()}`);
    }
  };
  return { inst, frame, until };
}

describe('useBusMessages', () => {
  function Probe({ source, names }: { source: BusSource; names: string[] }) {
    const [feed, dispatch] = useReducer(feedReducer, initialFeed('tester'));
    const [status, setStatus] = useState<string | null>(null);
    useBusMessages(source, dispatch, { channelNames: { current: names }, channels: [] }, setStatus);
    return <Text>{`bodies: ${feed.messages.map((m) => m.body).join(',')} | tabs: ${feed.channels.join(',')} | status: ${status ?? '-'}`}</Text>;
  }

  it('delivers arrivals and channel directories into the feed, trouble to the status, and stops on unmount', async () => {
    const source = counted(createBusSource({ root: bus.root, rescanMs: 50, batchMs: 10, reader: PERSON }));
    source.loadInitial(10);
    const c = mount(<Probe source={source} names={['planned']} />);
    expect(source.starts).toBe(1);
    expect((await runInProcess(['send', 'hello'], { env: agentEnv() })).exitCode).toBe(0);
    expect((await runInProcess(['join', 'ops'], { env: agentEnv() })).exitCode).toBe(0);
    expect((await runInProcess(['send', '--channel', 'ops', 'deploying'], { env: agentEnv() })).exitCode).toBe(0);
    // The store's channel names come along with every directory listing.
    await c.until((f) => f.includes('hello') && f.includes('deploying') && /tabs: .*ops/.test(f) && f.includes('planned'), 'the arrivals and the tabs');
    writeFileSync(join(bus.root, 'signals', '_broadcast', '0zzzzzzzzzzz-bad.signal'), 'not a signal line');
    await c.until((f) => f.includes('status: 1 unreadable file skipped'), 'the status line');
    // New props are read when the next event comes; they never restart the subscription.
    c.inst.rerender(<Probe source={source} names={['planned', 'later']} />);
    mkdirSync(join(bus.root, 'signals', '@dev'), { mode: 0o700 });
    await c.until((f) => /tabs: dev,later,ops,planned /.test(f), 'the new names with the next rescan');
    expect(source.starts).toBe(1);
    c.inst.unmount();
    expect(source.stops).toBe(1);
  });
});

describe('usePeers', () => {
  function Probe({ acts, timers }: { acts: ChatActions; timers: ReturnType<typeof manualTimers> }) {
    const [failed, setFailed] = useState('-');
    const r = usePeers(acts, { rosterMs: 500, failed: setFailed, timers });
    return <Text>{`live: ${r.peers.map((p) => p.id).join(',') || 'nobody'} | channels: ${r.channels.map((ch) => `${ch.name}(${ch.members.length})`).join(',')} | names: ${r.channelNames.current.join(',')} | failed: ${failed}`}</Text>;
  }

  it('reads the roster at mount and every rosterMs, and stops polling on unmount', async () => {
    const timers = manualTimers();
    const c = mount(<Probe acts={actions()} timers={timers} />);
    expect(c.frame()).toContain('live: nobody | channels:  | names:  | failed: -');
    writePresence(bus.root, { id: 'ops-lead', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
    expect((await runInProcess(['join', 'ops'], { env: agentEnv() })).exitCode).toBe(0);
    await waitFor(() => timers.pending() === 1, { what: 'the poller started' });
    timers.advance(500);
    await c.until((f) => f.includes('live: ops-lead | channels: ops(1) | names: ops | failed: -'), 'the roster re-read');
    c.inst.unmount();
    expect(timers.pending()).toBe(0);
  });

  it('says when the roster cannot be read and keeps the last one', async () => {
    const timers = manualTimers();
    const real = actions();
    let broken = false;
    const acts: ChatActions = {
      ...real,
      peers: () => {
        if (broken) throw new Error('EIO');
        return real.peers();
      },
    };
    writePresence(bus.root, { id: 'ops-lead', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
    const c = mount(<Probe acts={acts} timers={timers} />);
    expect(c.frame()).toContain('live: ops-lead');
    broken = true;
    await waitFor(() => timers.pending() === 1, { what: 'the poller started' });
    timers.advance(500);
    await c.until((f) => f.includes('failed: cannot read the roster: EIO') && f.includes('live: ops-lead'), 'the failure said');
  });
});

describe('useHistory and useScrollBack', () => {
  let dispatchRef: Dispatch<FeedAction> | null = null;
  function Probe({ source, limit, atTop }: { source: BusSource; limit: number; atTop: boolean }) {
    const [feed, dispatch] = useHistory(source, { me: 'tester', width: 100, channels: ['planned'], initialLimit: limit });
    dispatchRef = dispatch;
    useScrollBack(source, atTop, feed, dispatch);
    return <Text>{`count: ${feed.messages.length} | older: ${feed.hasOlder} | newest: ${feed.messages.at(-1)?.body} | oldest: ${feed.messages[0]?.body} | tabs: ${feed.channels.join(',')}`}</Text>;
  }

  it('shows the first page at once, fills the rest of the initial history after it, and pages older on scroll-back', async () => {
    const mk = ids(() => Date.now() - 60_000);
    const total = FIRST_PAGE + 30;
    for (let i = 0; i < total; i++) put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: `m${i}` });
    const source = createBusSource({ root: bus.root, reader: PERSON });
    unmounts.push(() => source.stop());
    const c = mount(<Probe source={source} limit={FIRST_PAGE + 10} atTop={false} />);
    expect(c.frame()).toMatch(new RegExp(`^count: (${FIRST_PAGE}|${FIRST_PAGE + 10}) \\| older: true \\| newest: m${total - 1} \\| oldest: m(30|20) \\| tabs: planned`));
    await c.until((f) => f.startsWith(`count: ${FIRST_PAGE + 10} | older: true | newest: m${total - 1} | oldest: m20 `), 'the rest of the initial history');
    // Scrolled back to the top of what is in memory: the older page comes in.
    dispatchRef?.({ type: 'scroll', delta: 5 });
    c.inst.rerender(<Probe source={source} limit={FIRST_PAGE + 10} atTop={true} />);
    await c.until((f) => f.startsWith(`count: ${total} | older: false | newest: m${total - 1} | oldest: m0 `), 'the older page');
  });
});
