// The feed and its history: the reducer (state/feed.ts) starts from the first page of the
// bus source, the rest of the initial history is read in the background, and older pages
// come in when the operator scrolls to the top of what is in memory.

import { type Dispatch, useEffect, useReducer, useRef } from 'react';
import type { Message } from '../../bus/store/index.js';
import type { BusSource } from '../bus-source.js';
import { type FeedAction, type FeedState, feedReducer, initialFeed, MEMORY_CAP } from '../state/feed.js';
import { realTimers, type Timers } from '../source/timers.js';

const OLDER_PAGE = 1000;
/**
 * The first frame shows the newest FIRST_PAGE messages; the rest of the initial history (up
 * to `initialLimit`) is read after it, FILL_CHUNK at a time with input handled in between (a
 * chunk holds the event loop ~5 ms), and goes to the feed in one update at the end: an update
 * re-renders the feed, and forty of them would each hold a keystroke back. So the first frame
 * costs the same on a bus of a thousand messages as on one of a hundred thousand (issue #12
 * §2), and typing stays responsive while the rest loads.
 */
export const FIRST_PAGE = 500;
const FILL_CHUNK = 50;

interface HistoryOptions {
  me: string;
  width: number;
  /** Channel names for the first tabs besides the directories on the bus (the channel store). */
  channels: string[];
  initialLimit?: number | undefined;
  timers?: Timers;
}

export function useHistory(source: BusSource, opts: HistoryOptions): [FeedState, Dispatch<FeedAction>] {
  const initialLimit = opts.initialLimit ?? MEMORY_CAP;
  const timers = opts.timers ?? realTimers;
  const filled = useRef<{ taken: number; hasOlder: boolean }>({ taken: 0, hasOlder: false });
  const [feed, dispatch] = useReducer(feedReducer, null, () => {
    const first = source.loadInitial(Math.min(FIRST_PAGE, initialLimit));
    filled.current = { taken: Math.min(FIRST_PAGE, initialLimit), hasOlder: first.hasOlder };
    const s = feedReducer(initialFeed(opts.me, opts.width), { type: 'loaded', messages: first.messages, hasOlder: first.hasOlder });
    return feedReducer(s, { type: 'channels', names: [...source.channelDirs(), ...opts.channels] });
  });

  useEffect(() => {
    let cancel: (() => void) | null = null;
    const read: Message[] = [];
    const step = () => {
      const f = filled.current;
      if (f.hasOlder && f.taken < initialLimit) {
        const n = Math.min(FILL_CHUNK, initialLimit - f.taken);
        const older = source.loadOlder(n);
        filled.current = { taken: f.taken + n, hasOlder: older.hasOlder };
        read.push(...older.messages);
        cancel = timers.after(0, step);
        return;
      }
      if (read.length > 0 || f.taken > FIRST_PAGE) dispatch({ type: 'older', messages: read.splice(0), hasOlder: f.hasOlder });
    };
    cancel = timers.after(0, step);
    return () => cancel?.();
  }, [source, initialLimit, timers]);

  return [feed, dispatch];
}

/** Scrolled to the top of what is in memory (`atTop`): page older messages in from disk. */
export function useScrollBack(source: BusSource, atTop: boolean, feed: Pick<FeedState, 'hasOlder' | 'scroll'>, dispatch: Dispatch<FeedAction>): void {
  useEffect(() => {
    if (atTop && feed.hasOlder && feed.scroll > 0) {
      const older = source.loadOlder(OLDER_PAGE);
      dispatch({ type: 'older', messages: older.messages, hasOlder: older.hasOlder });
    }
  }, [atTop, feed.hasOlder, feed.scroll, source, dispatch]);
}
