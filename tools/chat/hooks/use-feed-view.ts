// What the feed shows, derived from the feed state and the roster: the one name rule
// (tools/wire/display.ts), the line context (state/lines.ts) and the visible window.
// Memoized, so a render that changed neither (a keystroke) does not lay the feed out again.

import { useMemo } from 'react';
import type { Peer } from '../../bus/presence/index.js';
import type { BusSource } from '../bus-source.js';
import { type ColorDepth, colorFor } from '../colors.js';
import { type FeedState, visibleItems } from '../state/feed.js';
import { type LineContext, visibleWindow } from '../state/lines.js';
import { nameLookup, partyLabel } from '../../wire/display.js';

interface FeedViewInputs {
  feed: FeedState;
  peers: Peer[];
  source: Pick<BusSource, 'knownNames'>;
  me: string;
  width: number;
  height: number;
  maxBody: number;
  depth: ColorDepth;
}

export function useFeedView({ feed, peers, source, me, width, height, maxBody, depth }: FeedViewInputs) {
  // Read with the roster: a session that ended shows by its last name, marked gone (issue #10).
  const known = useMemo(() => source.knownNames?.() ?? new Map<string, string>(), [peers, source]);
  // For senders, addressees and the thread marker alike.
  const names = useMemo(() => nameLookup(peers, me, known), [peers, me, known]);
  const items = useMemo(() => visibleItems(feed), [feed.messages, feed.active, feed.notices, feed.clearedAt, feed.me]);
  const lc: LineContext = useMemo(
    () => ({
      width,
      me,
      tab: feed.active,
      maxBodyLines: maxBody,
      selected: feed.selected,
      name: names.name,
      colorOf: (id) => colorFor(id, depth),
      parentSender: (id) => {
        const p = feed.byId.get(id);
        return p ? partyLabel(p.fromId, names) : undefined;
      },
    }),
    [width, me, feed.active, names, depth, feed.byId, maxBody, feed.selected],
  );
  const win = useMemo(() => visibleWindow(items, height, feed.scroll, lc), [items, height, feed.scroll, lc]);
  return { lc, win };
}
