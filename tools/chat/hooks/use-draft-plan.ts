// Where the draft would go, derived from the draft, the feed and the roster
// (state/destination.ts planDraft): what Enter does, and what the destination line says
// before it. Also the completion sources Tab reads.

import { useMemo } from 'react';
import type { Peer } from '../../bus/presence/index.js';
import type { ChannelInfo } from '../actions.js';
import { COMMANDS } from '../slash.js';
import { defaultDestination, planDraft } from '../state/destination.js';
import type { FeedState } from '../state/feed.js';
import type { PeerRef } from '../state/routing.js';

export function useDraftPlan(text: string, feed: FeedState, peers: Peer[], channels: ChannelInfo[]) {
  const me = feed.me;
  const peerRefs: PeerRef[] = useMemo(() => peers.map((p) => ({ id: p.id, name: p.name, kind: p.kind })), [peers]);
  const sources = useMemo(() => ({ peers: peerRefs, channels: feed.channels, me, commands: Object.keys(COMMANDS) }), [peerRefs, feed.channels, me]);
  const defaultDest = useMemo(() => defaultDestination(feed, peerRefs), [feed.active, feed.messages, peerRefs, me]);
  const reach = useMemo(
    () => ({ live: peerRefs, members: (c: string) => channels.find((x) => x.name === c)?.members ?? [] }),
    [peerRefs, channels],
  );
  const plan = useMemo(() => planDraft({ text, feed, sources, defaultDest, reach }), [text, feed, sources, defaultDest, reach]);
  return { plan, sources };
}
