import type { VerbCtx } from './context.js';
import { type GroupView, groupOf } from '../bus/trust/index.js';
import { existsSync } from 'node:fs';
import { nameParties, readFocus, readKnownNames } from '../bus/presence/index.js';

export interface WhoamiResult {
  resolved: boolean;
  reason: string;
  kind: 'agent' | 'human';
  id: string;
  sessionId: string | null;
  from: string;
  origin: string;
  displayName: string;
  via: string | null;
  pid: number | null;
  status: string | null;
  followedClear: boolean;
  busRoot: string;
  /** Lineage (issue 14): the recorded parent, and the group: parent, children, siblings. */
  parent: string | null;
  group: GroupView;
  /** In focus until (ms), issue 23 §3; null when not in focus. */
  focusUntil: number | null;
}

export function runWhoami(ctx: VerbCtx): WhoamiResult {
  const who = ctx.identity();
  // Live, the name the roster gave it; else the one it was given last (an agent between its
  // turns), else Claude Code's own name for it, else its id.
  const me = ctx.live().find((p) => p.id === who.id);
  let displayName = who.kind === 'human' ? who.id : (readKnownNames(ctx.root()).get(who.id) ?? who.record?.name ?? who.id);
  // An agent the roster does not list (an agent CLI between the tools it runs, a declared
  // harness) asking who it is gets its name here, as its first send would give it: what it is
  // and where (`codex-api`), kept from then on, and known on the bus, so another party can
  // address it by that name before it has sent anything. Only on a bus that exists (a fresh
  // `attend whoami` must not create it).
  if (!me && who.kind === 'agent' && existsSync(ctx.root())) {
    const given = nameParties(ctx.root(), [{ id: who.id, kind: who.kind, name: who.record?.name ?? '', origin: who.origin }], ctx.now()).get(who.id);
    if (given) displayName = given.name;
  }
  const group = groupOf(ctx.root(), who.id);
  if (me) displayName = me.name;
  return {
    resolved: who.resolved,
    reason: who.reason,
    kind: who.kind,
    id: who.id,
    sessionId: who.sessionId ?? null,
    from: who.from,
    origin: who.origin,
    displayName,
    via: who.via ?? null,
    pid: who.pid ?? null,
    status: who.record?.status ?? null,
    followedClear: who.followedClear ?? false,
    busRoot: ctx.paths.root,
    parent: group.parent,
    group,
    focusUntil: readFocus(ctx.root(), who.id, ctx.now())?.until ?? null,
  };
}
