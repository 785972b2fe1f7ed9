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
  // Read when an event comes, so a new callback or names object never restarts the
  // subscription: a restart would drop the arrivals waiting in the batch.
  const latest = useRef({ store, status });
  latest.current = { store, status };
  const storeNames = () => latest.current.store.channelNames.current;
  useEffect(() => {
    source.start({
      arrived: (messages) => dispatch({ type: 'arrived', messages }),
      status: (text) => latest.current.status(text),
      channels: (names) => dispatch({ type: 'channels', names: [...names, ...storeNames()] }),
    });
    return () => source.stop();
  }, [source, dispatch]);
  useEffect(() => {
    dispatch({ type: 'channels', names: [...source.channelDirs(), ...storeNames()] });
  }, [store.channels, source, dispatch]);
}
