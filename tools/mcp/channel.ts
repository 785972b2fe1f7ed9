// The `claude/channel` push (issue #6 §3): when Claude Code runs this server as a channel, new
// messages for the session arrive as `notifications/claude/channel`. It is a third conduit
// beside the sensor and the drain and shares their consumption ledger (takePending), so a
// message surfaced here is never surfaced again by `attend run` or the Stop hook.
//
// Deliver first, then record: `emit` hands the notification to the transport inside the
// ledger's lock. The SDK writes a notification synchronously up to stdout.write, and stdout
// is a pipe (synchronous on Linux), so the line is out before the ledger records it.

import type { Identity } from '../identity/resolve.js';
import { takePending } from '../bus/ledger.js';
import type { Message } from '../bus/signals.js';
import { noteSurfaced } from '../bus/surfaced.js';
import type { Ctx } from '../cli/context.js';
import { DIGEST_THRESHOLD, type NameLookup, TEACH_LINE, nameLookup, countDigest, formatDigest, formatObservation } from '../wire/party.js';
import { readKnownNames } from '../bus/names.js';

export const CHANNEL_METHOD = 'notifications/claude/channel';

export interface ChannelNotice {
  content: string;
  meta: Record<string, string>;
}

export interface ChannelDeps {
  makeCtx(): Ctx;
  /** Send one notification; must start the write before returning (see above). */
  emit(notice: ChannelNotice): void;
  warn(line: string): void;
  intervalMs?: number;
}

function namesFor(ctx: Ctx, me: string): NameLookup {
  return nameLookup(ctx.live(), me, readKnownNames(ctx.root()));
}

function metaOf(m: Message): Record<string, string> {
  const meta: Record<string, string> = { source: 'attend', id: m.id, from_kind: m.fromKind, from_id: m.fromId, to: m.to };
  if (m.re) meta.re = m.re;
  if (m.onBehalfOf) meta.on_behalf_of = m.onBehalfOf;
  return meta;
}

/** One wake: push what is pending for `who`. Returns the ids consumed. */
export function pushPending(ctx: Ctx, who: Identity, deps: Pick<ChannelDeps, 'emit' | 'warn'>): string[] {
  const root = ctx.root();
  return takePending(root, who, { now: ctx.now(), reporter: ctx.reporter, warn: deps.warn }, (p) => {
    const consume: string[] = [];
    const notes: string[] = [];
    if (p.hidden > 0) notes.push(`[attend] ${p.hidden} earlier message${p.hidden === 1 ? '' : 's'} not shown; attend inbox`);
    for (const inv of p.invited) notes.push(`[attend] invited to #${inv.channel}: ${inv.count} earlier message${inv.count === 1 ? '' : 's'} to read, ${inv.older} older not shown`);
    const teach = !p.ledger.taught && p.fresh.length > 0 ? [TEACH_LINE] : [];
    if (p.fresh.length > DIGEST_THRESHOLD) {
      deps.emit({ content: [...notes, formatDigest(countDigest(p.fresh, who.id)), ...teach].join('\n'), meta: { source: 'attend', digest: String(p.fresh.length) } });
      consume.push(...p.fresh.map((m) => m.id));
    } else {
      if (notes.length > 0) deps.emit({ content: notes.join('\n'), meta: { source: 'attend' } });
      const names = namesFor(ctx, who.id);
      p.fresh.forEach((m, i) => {
        const lines = formatObservation(m, names);
        deps.emit({ content: [...lines, ...(i === p.fresh.length - 1 ? teach : [])].join('\n'), meta: metaOf(m) });
        consume.push(m.id);
      });
    }
    if (consume.length > 0) {
      if (!p.ledger.taught) p.ledger.taught = true;
      const newest = p.fresh[p.fresh.length - 1];
      if (newest) noteSurfaced(root, who.id, { id: newest.id, time: newest.time });
    }
    return { consume, result: consume };
  });
}

/**
 * Poll for pending messages until stopped. Polling (not a watcher) keeps the MCP server's
 * footprint small; the sensor is the low-latency conduit, this one only has to be timely.
 */
export function startChannelPush(deps: ChannelDeps): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (stopped) return;
    try {
      const ctx = deps.makeCtx();
      const who = ctx.identity();
      // Only a resolved session has a ledger to share with the sensor and the drain.
      if (who.resolved) pushPending(ctx, who, deps);
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
