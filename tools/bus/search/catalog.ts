// Search over the bus (issue 23 §4): a FlexSearch index per scope directory, kept up to date
// lazily. Sending costs nothing more: the search process itself catches up, under a lock, from
// each directory's `.index` since where it last stopped (the one follower's loose rule,
// tools/bus/store/follower.ts followTail, the relay's too: a file written without a line is
// picked up by a full listing within PATIENCE_MS), then queries. A new message is therefore
// searchable by the next search, and a search reads only what was appended since the last one
// plus, per segment, the buckets its terms fall in (./segments.ts).
//
// This room decides nothing about who may see what: it answers "which messages of these
// directories match, best first", and the verb (tools/verbs/search.ts) reads each hit and asks
// the read gate, as every other reader does.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Encoder, Index } from 'flexsearch';
import type { Scope } from '../../wire/envelope.js';
import { writeFileAtomic } from '../store/atomic.js';
import { followTail, newTailState, type TailState } from '../store/follower.js';
import { cacheDir, scopeDir, scopeDirName } from '../store/layout.js';
import { withLock } from '../store/lock.js';
import { type Message, type Reporter, readMessage } from '../store/messages.js';
import { DIR_MODE } from '../store/root.js';
import { type MapEntry, type Postings, SEGMENT_DOCS, bucketOf, readSegmentIds, readSegmentIdsAt, readSegmentPostings, writeSegment } from './segments.js';

/** How long a change the directory's index does not explain may wait for a full listing. */
const PATIENCE_MS = 30_000;
/** How often the index's chain is checked meanwhile. */
const RECHECK_MS = 1_000;
/** Doc numbers of one scope, offset by scope in a query's index: room for 2^32 per scope. */
const SCOPE_STRIDE = 2 ** 32;

// One tokenizer for indexing and querying: whole words, case and accents folded (FlexSearch's
// default encoder). `strict` indexes words, not prefixes, which keeps a segment small.
const OPTIONS = { tokenize: 'strict', resolution: 9 } as const;

/**
 * An encoder for a short run: without FlexSearch's memo, whose first use arms a 50 ms timer
 * that is not unref'd and so held every search process open ~35 ms after it had printed.
 * A large catch-up (a history indexed for the first time) keeps the memo: it repeats words.
 */
function encoderFor(words: 'few' | 'many'): Encoder {
  return words === 'many' ? new Encoder() : new Encoder({ cache: false });
}

function newIndex(encoder: Encoder): Index {
  return new Index({ ...OPTIONS, encoder });
}

interface SearchState {
  v: 1;
  /** Messages indexed so far: the next doc number. */
  docs: number;
  follow: TailState;
}

/** Where the search index of a scope lives (derived data: safe to delete, rebuilt). */
export function searchDir(root: string, scope: Scope): string {
  return join(cacheDir(root), 'search', scopeDirName(scope));
}

function readState(dir: string): SearchState {
  try {
    const s = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as SearchState;
    if (s.v === 1 && Number.isSafeInteger(s.docs) && s.docs >= 0 && typeof s.follow === 'object' && s.follow !== null) return s;
  } catch {
    // none yet, or unreadable: start over (the index is derived data)
  }
  return { v: 1, docs: 0, follow: newTailState() };
}

/** What a message is found by: its body and who sent it. */
function textOf(m: Message): string {
  return `${m.body}\n${m.from}`;
}

/** Export an index's posting lists (FlexSearch's own `map` entries). */
function exportEntries(ix: Index): MapEntry[] {
  const out: MapEntry[] = [];
  ix.export((key: string, data: string) => {
    if (key.endsWith('.map') || key === 'map') for (const e of JSON.parse(data) as MapEntry[]) out.push(e);
  });
  return out;
}

/** Append `b`'s postings to `a`'s, slot by slot (doc numbers never repeat across segments). */
function mergePostings(a: Postings, b: Postings): Postings {
  const out = a.slice();
  for (let i = 0; i < b.length; i++) {
    const more = b[i];
    if (!more) continue;
    out[i] = out[i] ? [...(out[i] as number[]), ...more] : more.slice();
  }
  return out;
}

export interface CatchUp {
  /** Messages added to the index by this catch-up. */
  added: number;
  /** Whether the directory was listed in full (first sight, or a change its index did not explain). */
  listed: boolean;
}

/**
 * Bring the index of `scope` up to date with its directory, under the index's lock. Reads
 * the directory's `.index` from where the last catch-up stopped and each new message once.
 */
export function catchUp(root: string, scope: Scope, reporter: Reporter, now: number = Date.now()): CatchUp {
  const dir = searchDir(root, scope);
  const signals = scopeDir(root, scope);
  if (!existsSync(signals)) return { added: 0, listed: false };
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  return withLock(join(dir, 'lock'), () => {
    const st = readState(dir);
    const was = JSON.stringify(st);
    const f = followTail(signals, st.follow, { now, patience: PATIENCE_MS, every: RECHECK_MS, reporter });
    let seg = Math.floor(st.docs / SEGMENT_DOCS);
    // What is indexed already, for the ids a follower can name twice: all of it after a full
    // listing (rare), else the last two segments (an index line read again, a racing writer).
    const known = new Set<string>();
    const from = f.via === 'listing' ? 0 : Math.max(0, seg - 1);
    if (f.ids.length > 0) for (let n = from; n <= seg; n++) for (const id of readSegmentIds(dir, n)) known.add(id);
    const fresh = f.ids.filter((id) => !known.has(id) && (known.add(id), true));
    if (fresh.length > 0) {
      const encoder = encoderFor(fresh.length > 1000 ? 'many' : 'few');
      let ix = newIndex(encoder);
      let ids = readSegmentIds(dir, seg);
      if (ids.length > 0) ix.import('map', readSegmentPostings(dir, seg, undefined) as unknown as string);
      for (const id of fresh) {
        const m = readMessage(root, scope, id, reporter);
        if (m === null) continue;
        ix.add(seg * SEGMENT_DOCS + ids.length, textOf(m));
        ids.push(id);
        st.docs++;
        if (ids.length === SEGMENT_DOCS) {
          writeSegment(dir, seg, ids, exportEntries(ix));
          seg++;
          ix = newIndex(encoder);
          ids = [];
        }
      }
      if (ids.length > 0) writeSegment(dir, seg, ids, exportEntries(ix));
    }
    // The state last: a crash before it costs the next catch-up reading these lines again.
    // Not synced, and not written when nothing moved (most searches): a state lost to a power
    // cut reads the same lines again (the ids known are skipped) or rebuilds the index.
    const now_ = JSON.stringify(st);
    if (now_ !== was) writeFileAtomic(join(dir, 'state.json'), now_, { sync: false });
    return { added: fresh.length, listed: f.via === 'listing' };
  });
}

/** One match: the scope directory it was found in and the message id, best first. */
export interface Hit {
  scope: Scope;
  id: string;
}

/** The query's terms as the index has them (empty: nothing to look for). */
export function queryTerms(query: string): string[] {
  return [...new Set(encoderFor('few').encode(query))];
}

/**
 * The messages of `scopes` that match `query`, best first, at most `limit`. Every term must
 * match (FlexSearch's default); a message in several scopes (a fan-out) may be hit in each.
 */
export function searchScopes(root: string, scopes: Scope[], query: string, limit: number): Hit[] {
  const terms = queryTerms(query);
  if (terms.length === 0) return [];
  const want = new Set(terms.map(bucketOf));
  const wanted = new Set(terms);
  const merged = new Map<string, Postings>();
  const segsOf: { dir: string; count: number }[] = [];
  scopes.forEach((scope, s) => {
    const dir = searchDir(root, scope);
    const docs = readState(dir).docs;
    const count = Math.ceil(docs / SEGMENT_DOCS);
    segsOf.push({ dir, count });
    for (let n = 0; n < count; n++) {
      for (const [term, postings] of readSegmentPostings(dir, n, want, (t) => wanted.has(t))) {
        // Doc numbers of scope s are moved up by s strides, so one index ranks them all.
        const moved = s === 0 ? postings : postings.map((p) => (p ? p.map((d) => d + s * SCOPE_STRIDE) : p));
        const had = merged.get(term);
        merged.set(term, had ? mergePostings(had, moved) : moved);
      }
    }
  });
  if (merged.size === 0) return [];
  const ix = newIndex(encoderFor('few'));
  ix.import('map', [...merged.entries()] as unknown as string);
  const found = ix.search(query, { limit }) as number[];
  // Only the ids hit are read: one pread each, grouped by segment.
  const wantIds = new Map<string, { s: number; n: number; at: number[] }>();
  const place = found.map((d) => {
    const s = Math.floor(d / SCOPE_STRIDE);
    const local = d - s * SCOPE_STRIDE;
    const n = Math.floor(local / SEGMENT_DOCS);
    const key = `${s}:${n}`;
    let w = wantIds.get(key);
    if (!w) wantIds.set(key, (w = { s, n, at: [] }));
    w.at.push(local - n * SEGMENT_DOCS);
    return { key, s, i: local - n * SEGMENT_DOCS };
  });
  const got = new Map<string, Map<number, string>>();
  for (const [key, w] of wantIds) {
    const where = segsOf[w.s];
    if (where) got.set(key, readSegmentIdsAt(where.dir, w.n, w.at));
  }
  const hits: Hit[] = [];
  for (const p of place) {
    const id = got.get(p.key)?.get(p.i);
    if (id !== undefined) hits.push({ scope: scopes[p.s]!, id });
  }
  return hits;
}
