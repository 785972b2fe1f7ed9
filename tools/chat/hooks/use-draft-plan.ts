// Where the draft would go, derived from the draft, the feed and the roster
// (state/destination.ts planDraft): what Enter does, and what the destination line says
// before it. Also the completion sources Tab reads.

import { useMemo } from 'react';
import type { Peer } from '../../bus/presence/index.js';
import type { ChannelInfo, ChatActions } from '../actions.js';
import { COMMANDS } from '../slash.js';
import { defaultDestination, planDraft } from '../state/destination.js';
import type { FeedState } from '../state/feed.js';

export function useDraftPlan(text: string, feed: FeedState, peers: Peer[], channels: ChannelInfo[], actions: Pick<ChatActions, 'addressBook'>, now: () => number) {
  const me = feed.me;
  // The send's address book (live here and elsewhere, then the known), taken anew with each
  // roster read; its known tiers are read only when a draft names nobody live.
  const book = useMemo(() => actions.addressBook(peers), [actions, peers]);
  const sources = useMemo(() => ({ book, channels: feed.channels, me, commands: Object.keys(COMMANDS) }), [book, feed.channels, me]);
  const defaultDest = useMemo(() => defaultDestination(feed, book), [feed.active, feed.messages, book, me]);
  // `now` with each roster read: "last seen 5m ago" moves with the roster, not per key.
  const reach = useMemo(
    () => ({ live: peers, members: (c: string) => channels.find((x) => x.name === c)?.members ?? [], now: now() }),
    [peers, channels, now],
  );
  const plan = useMemo(() => planDraft({ text, feed, sources, defaultDest, reach }), [text, feed, sources, defaultDest, reach]);
  return { plan, sources };
}
