// The roster as React state: who is live and which channels exist, re-read by the roster
// poller (source/roster.ts) while the component is mounted; `refresh` re-reads at once.

import { useEffect, useMemo, useRef, useState } from 'react';
import type { Peer } from '../../bus/presence/index.js';
import type { ChatActions, ChannelInfo } from '../actions.js';
import { createRosterPoller } from '../source/roster.js';
import { realTimers, type Timers } from '../source/timers.js';

interface PeersState {
  peers: Peer[];
  channels: ChannelInfo[];
  /**
   * The store's channel names, for the bus source's rescans to add to the directories they
   * find. Set synchronously by every read, not in an effect: a channel created by a slash
   * command has no directory until its first message, and a rescan that ran before the
   * effect would drop its tab (and move the operator back to merged).
   */
  channelNames: { readonly current: string[] };
  refresh(): void;
}

export function usePeers(actions: Pick<ChatActions, 'peers' | 'channels'>, opts: { rosterMs?: number | undefined; failed(text: string): void; timers?: Timers }): PeersState {
  const [peers, setPeers] = useState<Peer[]>(() => actions.peers());
  const [channels, setChannels] = useState<ChannelInfo[]>(() => actions.channels());
  const channelNames = useRef<string[]>(channels.map((c) => c.name));
  const failed = useRef(opts.failed);
  failed.current = opts.failed;
  const timers = opts.timers ?? realTimers;
  const poller = useMemo(
    () =>
      createRosterPoller({
        read: actions,
        timers,
        ...(opts.rosterMs !== undefined ? { everyMs: opts.rosterMs } : {}),
        peers: setPeers,
        channels: (info) => {
          channelNames.current = info.map((c) => c.name);
          setChannels(info);
        },
        failed: (text) => failed.current(text),
      }),
    [actions, timers, opts.rosterMs],
  );
  useEffect(() => {
    poller.start();
    return () => poller.stop();
  }, [poller]);
  const refresh = useMemo(() => () => void poller.refresh(), [poller]);
  return { peers, channels, channelNames, refresh };
}
