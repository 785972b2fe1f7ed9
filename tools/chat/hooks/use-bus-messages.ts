// The bus source's live subscription (bus-source.ts): arrivals and channel directories go to
// the feed reducer, trouble to the status line; started on mount, stopped on unmount. The
// tabs also follow the channel store (usePeers' channels), whose channels may have no
// directory yet.

import { type Dispatch, useEffect, useRef } from 'react';
import type { ChannelInfo } from '../actions.js';
import type { BusSource } from '../bus-source.js';
import type { FeedAction } from '../state/feed.js';

export function useBusMessages(
  source: BusSource,
  dispatch: Dispatch<FeedAction>,
  store: { channelNames: { readonly current: string[] }; channels: readonly ChannelInfo[] },
  status: (text: string | null) => void,
): void {
  const { channelNames } = store;
  const statusRef = useRef(status);
  statusRef.current = status;
  useEffect(() => {
    source.start({
      arrived: (messages) => dispatch({ type: 'arrived', messages }),
      status: (text) => statusRef.current(text),
      channels: (names) => dispatch({ type: 'channels', names: [...names, ...channelNames.current] }),
    });
    return () => source.stop();
  }, [source, dispatch, channelNames]);
  useEffect(() => {
    dispatch({ type: 'channels', names: [...source.channelDirs(), ...channelNames.current] });
  }, [store.channels, source, dispatch, channelNames]);
}
