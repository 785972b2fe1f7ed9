// `attend peers` (issue #3 §6): every live session and human, with what delivers to it. A
// session nothing delivers to is flagged deaf: that is where messages silently pile up.

import type { VerbCtx } from './context.js';
import { readChannels } from '../bus/channels/index.js';
import { isDeaf } from '../bus/presence/index.js';
import { remoteMembers } from '../bus/presence/index.js';

interface PeerRow {
  id: string;
  kind: 'agent' | 'human';
  /** Display name, with its ordinal when sessions share an origin. */
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
  /** An agent with no fresh sensor heartbeat and no drain in the last 10 minutes. */
  deaf: boolean;
  me: boolean;
  /** The machine, for members on other machines (issue 13); null here. */
  host: string | null;
}

export function runPeers(ctx: VerbCtx): { peers: PeerRow[] } {
  const me = ctx.identity().id;
  const store = readChannels(ctx.root());
  const peers = ctx.live().map((p): PeerRow => {
    const channels = ['#open', ...Object.keys(store.channels).filter((n) => store.channels[n]?.members[p.id]).sort().map((n) => `#${n}`)];
    const d = p.delivery ?? { sensor: null, drain: null, chat: null, delivering: false };
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
      delivering: d.delivering,
      deaf: isDeaf({ kind: p.kind, delivery: d }),
      me: p.id === me,
      host: null,
    };
  });
  // Members other machines' relays announced (tools/bus/presence/remote.ts); their delivery is judged there.
  for (const m of remoteMembers(ctx.paths.root, ctx.now())) {
    if (m.kind === 'agent' && peers.some((p) => p.id === m.id)) continue;
    peers.push({ id: m.id, kind: m.kind, name: m.name, origin: m.origin, status: m.status ?? null, sessionName: null, channels: ['#open'], lastSeen: ctx.now(), sensor: null, drain: null, delivering: !m.deaf, deaf: m.deaf === true, me: false, host: m.host });
  }
  return { peers };
}
