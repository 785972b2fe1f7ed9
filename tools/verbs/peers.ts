// `attend peers` (issue #3 §6): every live session and human, with how a message reaches
// it (issue 21 item 7: shown by a conduit, at its next turn, waiting, held; reachOf decides).

import type { VerbCtx } from './context.js';
import { readChannels } from '../bus/channels/index.js';
import { reachOf, readFocusAll, rememberParties, remoteMembers } from '../bus/presence/index.js';
import type { Reach } from '../wire/display.js';
import { holdingsOf } from './claims-check.js';

interface PeerRow {
  id: string;
  kind: 'agent' | 'human';
  /** Display name: given once and kept while it lives (tools/bus/presence/names.ts). */
  name: string;
  origin: string;
  /** Claude Code's own status for the session (busy/idle), when it has a record. */
  status: string | null;
  /** Claude Code's session name, when it has one. */
  sessionName: string | null;
  channels: string[];
  lastSeen: number;
  sensor: number | null;
  drain: number | null;
  delivering: boolean;
  /** How a message reaches it now (tools/bus/presence/reach.ts). */
  reach: Reach;
  me: boolean;
  /** The machine, for members on other machines (issue 13); null here. */
  host: string | null;
  /** The files it claims (issue 23 §2): patterns from their work tree's root. */
  holds: string[];
  /** In focus until (ms), issue 23 §3: only urgent messages and people wake it; null when not. */
  focusUntil: number | null;
}

export function runPeers(ctx: VerbCtx): { peers: PeerRow[] } {
  const me = ctx.identity().id;
  const store = readChannels(ctx.root());
  const holdings = holdingsOf(ctx.root(), ctx.now());
  const focus = readFocusAll(ctx.root(), ctx.now());
  const peers = ctx.live().map((p): PeerRow => {
    const channels = ['#open', ...Object.keys(store.channels).filter((n) => store.channels[n]?.members[p.id]).sort().map((n) => `#${n}`)];
    const d = p.delivery ?? { sensor: null, drain: null, chat: null, delivering: false };
    const reach = reachOf(p, ctx.now());
    return {
      id: p.id,
      kind: p.kind,
      name: p.name,
      origin: p.origin,
      status: p.record?.status ?? null,
      sessionName: p.record?.name ?? null,
      channels,
      lastSeen: p.lastSeen,
      sensor: d.sensor,
      drain: d.drain,
      delivering: reach.word === 'shown' || reach.word === 'next-turn',
      reach,
      me: p.id === me,
      host: null,
      holds: holdings.get(p.id) ?? [],
      focusUntil: focus.get(p.id)?.until ?? null,
    };
  });
  // Members other machines' relays announced (tools/bus/presence/remote.ts); their delivery is judged there.
  const remote = remoteMembers(ctx.paths.root, ctx.now());
  // Remembered, so they stay addressable while their machine is offline (issue 21 item 1).
  if (remote.length > 0) rememberParties(ctx.root(), remote, ctx.now());
  for (const m of remote) {
    if (m.kind === 'agent' && peers.some((p) => p.id === m.id)) continue;
    const reach = reachOf({ kind: m.kind, lastSeen: ctx.now(), host: m.host, ...(m.reach ? { reach: m.reach } : m.deaf ? { reach: { word: 'waiting', since: null } } : {}) }, ctx.now());
    peers.push({ id: m.id, kind: m.kind, name: m.name, origin: m.origin, status: m.status ?? null, sessionName: null, channels: ['#open'], lastSeen: ctx.now(), sensor: null, drain: null, delivering: reach.word === 'shown' || reach.word === 'next-turn', reach, me: false, host: m.host, holds: [], focusUntil: null });
  }
  return { peers };
}
