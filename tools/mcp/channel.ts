// The `claude/channel` push (issue #6 §3): when Claude Code runs this server as a channel, new
// messages for the session arrive as `notifications/claude/channel`. It is a third conduit
// beside the sensor and the drain and shares their consumption ledger (takePending), so a
// message surfaced here is never surfaced again by `attend run` or the Stop hook.
//
// Recorded in flight, pushed, confirmed (issue 21 §6): once takePending has recorded the wake
// in flight, `emit` hands the notifications to the transport inside the ledger's lock. The SDK
// writes a notification synchronously up to stdout.write, and stdout is a pipe (synchronous
// on Linux), so the line is out before the wake is confirmed.

import type { Identity } from '../identity/resolve.js';
import { noteShown, takePending } from '../bus/delivery/index.js';
import type { Message } from '../bus/store/index.js';
import type { VerbCtx } from '../verbs/context.js';
import { handOver } from '../bus/delivery/index.js';
import { createNameSource } from '../bus/presence/index.js';
import { resolveParents } from '../bus/delivery/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import { DIGEST_THRESHOLD } from '../wire/party.js';
import { type NameLookup, nameLookup } from '../wire/display.js';
import { itemIds, planStreamWake, streamItems } from '../wire/wake.js';
import { knownNamesSource, readFocus, readKnownNames } from '../bus/presence/index.js';

export const CHANNEL_METHOD = 'notifications/claude/channel';

export interface ChannelNotice {
  content: string;
  meta: Record<string, string>;
}

interface ChannelDeps {
  makeCtx(): VerbCtx;
  /** Send one notification; must start the write before returning (see above). */
  emit(notice: ChannelNotice): void;
  warn(line: string): void;
  intervalMs?: number;
}

function namesFor(ctx: VerbCtx, me: string): NameLookup {
  return nameLookup(ctx.live(), me, readKnownNames(ctx.root()));
}

function metaOf(m: Message): Record<string, string> {
  const meta: Record<string, string> = { source: 'attend', id: m.id, from_kind: m.fromKind, from_id: m.fromId, to: m.to };
  if (m.re) meta.re = m.re;
  if (m.onBehalfOf) meta.on_behalf_of = m.onBehalfOf;
  if (m.urgency) meta.urgency = m.urgency;
  return meta;
}

/**
 * One wake: push what is pending for `who` (the plan every conduit shares). Returns the ids
 * consumed. `names` and `known` are the loop's cached live and last known names; without
 * them both are read here.
 */
export function pushPending(
  ctx: VerbCtx,
  who: Identity,
  deps: Pick<ChannelDeps, 'emit' | 'warn'> & { names?: () => ReadonlyMap<string, string>; known?: () => ReadonlyMap<string, string> },
): string[] {
  const root = ctx.root();
  return takePending(root, who, { now: ctx.now(), reporter: ctx.reporter, warn: deps.warn, conduit: 'channel' }, (p) => {
    const known = p.fresh.length > DIGEST_THRESHOLD ? resolveParents(root, receiveScopes(root, who), p.fresh, ctx.reporter) : undefined;
    const plan = planStreamWake({ fresh: p.fresh, hidden: p.hidden, invited: p.invited, taught: p.ledger.taught, me: who.id, attention: { focus: readFocus(root, who.id, ctx.now()), now: ctx.now() }, ...(known ? { known } : {}), ...(p.again ? { again: p.again } : {}) });
    const notices: ChannelNotice[] = [];
    const consume: string[] = [];
    for (const item of streamItems(plan, deps.names ? nameLookup(deps.names(), who.id, deps.known?.() ?? readKnownNames(root)) : namesFor(ctx, who.id))) {
      if (item.kind === 'teach') {
        // Beside the message it teaches about, not a notification (a wake) of its own.
        const last = notices[notices.length - 1];
        if (last) last.content = [last.content, ...item.lines].join('\n');
        p.ledger.taught = true;
        continue;
      }
      const meta = item.kind === 'message' ? metaOf(item.message as Message) : item.kind === 'digest' ? { source: 'attend', digest: String(item.ids.length) } : { source: 'attend' };
      notices.push({ content: item.lines.join('\n'), meta });
      consume.push(...itemIds(item));
    }
    const newest = plan.full[plan.full.length - 1];
    if (newest) noteShown(p.ledger, newest);
    // Each notification is handed to the transport once takePending has recorded the wake in
    // flight, inside the ledger's lock.
    return { consume, result: consume, emit: () => notices.forEach((n) => deps.emit(n)) };
  });
}

/**
 * Poll for pending messages until stopped. Polling (not a watcher) keeps the MCP server's
 * footprint small; the sensor is the low-latency conduit, this one only has to be timely.
 */
export function startChannelPush(deps: ChannelDeps): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // Names from a change-notified source, not a roster rebuild per wake (issue #12 §3).
  let names: (() => Map<string, string>) | undefined;
  // And the last known names, so a party that ended reads `api (gone)` here as in the sensor.
  let known: (() => Map<string, string>) | undefined;
  const tick = () => {
    if (stopped) return;
    try {
      const ctx = deps.makeCtx();
      const who = ctx.identity();
      // Only a resolved session has a ledger to share with the sensor and the drain; after
      // a /clear it is handed over like theirs, so nothing recent is pushed again.
      if (who.resolved) {
        handOver(ctx.root(), who, ctx.env);
        names ??= createNameSource({ root: ctx.root(), sessionsDir: ctx.paths.sessionsDir, procInfo: ctx.procInfo }, ctx.now);
        known ??= knownNamesSource(ctx.root());
        pushPending(ctx, who, { ...deps, names, known });
      }
    } catch (err) {
      deps.warn(`attend mcp: channel push failed: ${(err as Error).message}`);
    }
    if (!stopped) timer = setTimeout(tick, deps.intervalMs ?? 500);
  };
  timer = setTimeout(tick, 0);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
