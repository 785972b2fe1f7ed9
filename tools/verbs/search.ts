// `search` (issue 23 §4): full-text search over everything the reader may see, best first,
// with each hit's message id and thread. The index (tools/bus/search) is brought up to date
// from the directories' indexes first, so a message written a moment ago is found; then every
// hit is read and passes the same checks an inbox makes: the receive set, a sibling's tray
// mail is not the reader's (tools/wire/visibility.ts maySee), and the read gate holds back
// what is refused or badly signed (tools/bus/trust/gate.ts). Nothing is consumed.

import type { VerbCtx } from './context.js';
import { catchUp, queryTerms, searchScopes } from '../bus/search/index.js';
import { type Message, readMessage } from '../bus/store/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import { createGate } from '../bus/trust/index.js';
import { readKnownNames } from '../bus/presence/index.js';
import { parseDuration } from '../bus/upkeep/index.js';
import { notFoundError, refusedError, usageError } from '../wire/errors.js';
import type { Scope } from '../wire/envelope.js';
import { idTime } from '../wire/ids.js';
import { printable } from '../wire/names.js';
import { maySee } from '../wire/visibility.js';
import { scopeName } from '../wire/display.js';

export const SEARCH_LIMIT_MAX = 100;
/** A catch-up this large is told on stderr (a history indexed for the first time). */
const FIRST_SEARCH_NOTE = 5_000;

export interface SearchInput {
  query: string;
  from?: string | undefined;
  channel?: string | undefined;
  since?: string | undefined;
  limit?: number | undefined;
}

/**
 * The input checked by hand, not with zod: the search fast path (fast-search.ts) would carry
 * zod's ~40 ms of load for five fields. A bad one is a usage error (exit 2), as the CLI says.
 */
function checkInput(raw: SearchInput): SearchInput & { query: string; limit: number } {
  const query = typeof raw.query === 'string' ? raw.query.trim() : '';
  if (query.length === 0) throw usageError('the query is empty');
  if (query.length > 500) throw usageError('the query is longer than 500 characters');
  const text = (name: string, v: string | undefined, max: number) => {
    if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.length > max)) throw usageError(`--${name} takes 1 to ${max} characters`);
  };
  text('from', raw.from, 200);
  text('channel', raw.channel, 200);
  text('since', raw.since, 40);
  const limit = raw.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT_MAX) throw usageError(`--limit takes a number from 1 to ${SEARCH_LIMIT_MAX}`);
  return { query, from: raw.from, channel: raw.channel, since: raw.since, limit };
}

export interface SearchHit {
  message: Message;
  /** The root of the thread the hit belongs to (its own id when it starts one). */
  thread: string;
}

export interface SearchResult {
  query: string;
  hits: SearchHit[];
}

/** `--since`: a duration back from now (`2h`, `3d`) or a date; the earliest time, ms. */
function sinceTime(text: string, now: number): number {
  const d = parseDuration(text);
  if (d !== null) return now - d;
  const t = Date.parse(text);
  if (!Number.isNaN(t)) return t;
  throw usageError(`'${printable(text)}' is not a duration (30m, 2h, 7d) or a date (2026-12-01)`);
}

/** The scopes searched: the receive set, or the one channel (or #open) asked for, if in it. */
function scopesOf(ctx: VerbCtx, channel: string | undefined): Scope[] {
  const all = receiveScopes(ctx.root(), ctx.identity());
  if (channel === undefined) return all;
  const name = channel.replace(/^#/, '');
  const one = all.find((s) => (name === 'open' ? s.kind === 'open' : s.kind === 'channel' && s.name === name));
  if (!one) throw notFoundError(`you are not in #${printable(name)}`, 'attend channels lists the channels you are in');
  return [one];
}

/** Whether `m` is from the party `from` names: its id, its envelope `from`, or its known name. */
function isFrom(m: Message, from: string, names: ReadonlyMap<string, string>): boolean {
  const want = from.replace(/^@/, '');
  return m.fromId === want || m.from === want || names.get(m.fromId) === want;
}

/** The root of `m`'s thread, up the `re` chain within the directory it was found in. */
function threadOf(ctx: VerbCtx, m: Message): string {
  let at = m;
  const seen = new Set([m.id]);
  while (at.re !== undefined && !seen.has(at.re) && seen.size < 64) {
    const parent = readMessage(ctx.root(), at.scope, at.re, ctx.reporter);
    if (!parent) return at.re;
    seen.add(parent.id);
    at = parent;
  }
  return at.id;
}

export function runSearch(ctx: VerbCtx, raw: SearchInput): SearchResult {
  const input = checkInput(raw);
  if (queryTerms(input.query).length === 0) throw usageError(`'${printable(input.query)}' has no words to search for`);
  const root = ctx.root();
  const who = ctx.identity();
  const scopes = scopesOf(ctx, input.channel);
  const since = input.since !== undefined ? sinceTime(input.since, ctx.now()) : undefined;
  const gate = createGate(root, who);
  const broken = gate.broken();
  if (broken !== null) throw refusedError(broken, 'attend doctor says what is wrong with the policy file');
  for (const scope of scopes) {
    const c = catchUp(root, scope, ctx.reporter, ctx.now());
    // The first search of a directory indexes its whole history, once: say so, since it is slow.
    if (c.listed && c.added >= FIRST_SEARCH_NOTE) ctx.warn(`attend: indexed ${c.added.toLocaleString('en-US')} messages of ${scopeName(scope)} for search (once; later searches read only what is new)`);
  }
  const names = input.from !== undefined ? readKnownNames(root) : new Map<string, string>();
  const hits: SearchHit[] = [];
  const seen = new Set<string>();
  // Ask the index for more than the limit: some hits are not the reader's (a sibling's tray
  // mail, held, filtered out). Widen until the limit is met or the index has no more.
  for (let want = input.limit * 4 + 16; ; want *= 4) {
    const found = searchScopes(root, scopes, input.query, want);
    hits.length = 0;
    seen.clear();
    for (const h of found) {
      if (seen.has(h.id)) continue;
      const t = idTime(h.id);
      if (since !== undefined && t !== null && t < since) continue;
      const m = readMessage(root, h.scope, h.id, ctx.reporter);
      if (m === null || !maySee(m.scope, m, who.id) || gate.held(m) !== null) continue;
      if (since !== undefined && m.time < since) continue;
      if (input.from !== undefined && !isFrom(m, input.from, names)) continue;
      seen.add(h.id);
      hits.push({ message: m, thread: threadOf(ctx, m) });
      if (hits.length === input.limit) break;
    }
    if (hits.length === input.limit || found.length < want) break;
  }
  return { query: input.query, hits };
}
