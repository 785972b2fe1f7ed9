// The one printed form of `attend search` (issue 23 §4), for the full CLI (register-search.ts)
// and its fast path (fast-search.ts): JSON, or each hit as the inbox prints a message, with
// its thread when it is a reply.

import type { Ctx } from './context.js';
import type { Io } from './io.js';
import { usageError } from '../wire/errors.js';
import { runSearch } from '../verbs/search.js';
import { messageJson } from '../verbs/inbox.js';
import { formatBlock } from './format.js';
import { nameLookup } from '../wire/display.js';
import { readKnownNames } from '../bus/presence/index.js';

export interface SearchArgs {
  words: string[];
  from?: string | undefined;
  channel?: string | undefined;
  since?: string | undefined;
  limit: string;
  json?: boolean | undefined;
}

export function printSearch(ctx: Ctx, io: Io, a: SearchArgs): void {
  const limit = /^\d{1,4}$/.test(a.limit) ? Number(a.limit) : Number.NaN;
  if (!(limit >= 1 && limit <= 100)) throw usageError(`--limit takes a number from 1 to 100, not '${a.limit.slice(0, 20)}'`);
  const r = runSearch(ctx, { query: a.words.join(' '), from: a.from, channel: a.channel, since: a.since, limit });
  if (a.json) return io.json({ query: r.query, hits: r.hits.map((h) => ({ ...messageJson(h.message), thread: h.thread })) });
  if (r.hits.length === 0) return io.out('No matches.');
  const names = nameLookup(ctx.live(), ctx.identity().id, readKnownNames(ctx.root()));
  const now = ctx.now();
  io.out(r.hits.map((h) => `${formatBlock(h.message, names, now)}${h.thread !== h.message.id ? `\nthread: ${h.thread}` : ''}`).join('\n\n'));
}
