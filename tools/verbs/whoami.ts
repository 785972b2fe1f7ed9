import type { VerbCtx } from './context.js';
import { nicknameFor } from '../wire/names.js';
import { type GroupView, groupOf } from '../bus/trust/index.js';

interface WhoamiResult {
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
}

export function runWhoami(ctx: VerbCtx): WhoamiResult {
  const who = ctx.identity();
  let displayName = who.kind === 'human' || !who.resolved ? who.id : (who.record?.name ?? nicknameFor(who.origin));
  const me = ctx.live().find((p) => p.id === who.id);
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
  };
}
