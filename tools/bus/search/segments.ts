// The search index on disk (issue 23 §4): per scope directory, segments of SEGMENT_DOCS
// messages each, in the order the directory's index named them. Every segment but the last
// is closed and never written again; the last is rewritten as messages join it.
//
//   <root>/cache/search/<scope dir name>/state.json    where the follower stopped, how many docs
//   <root>/cache/search/<scope dir name>/<n>.ids       the segment's message ids, fixed-width lines
//   <root>/cache/search/<scope dir name>/<n>.post      its posting lists, in BUCKETS parts
//
// The posting lists are FlexSearch's own (its export: `[term, [ids by resolution]]`); what is
// ours is only where they lie: a `.post` file is one JSON line naming each bucket's byte length,
// then the buckets, a term in bucket hash(term) % BUCKETS. A query reads, in every segment, only
// the buckets its terms fall in (tens of kilobytes at 100,000 messages), never a whole index:
// parsing FlexSearch's full export of 100,000 messages takes ~190 ms, MiniSearch's ~1.9 s
// (measured in scripts/bench/search.mjs's set-up), and a search is a process of its own.

import { closeSync, openSync, readFileSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { readAll, writeFileAtomic } from '../store/index.js';

/** Messages per segment: the last one is loaded whole and rewritten on every catch-up. */
export const SEGMENT_DOCS = 2048;
/** Buckets per segment file. */
export const BUCKETS = 256;

/** One posting list as FlexSearch exports it: doc numbers by resolution slot. */
export type Postings = (number[] | undefined | null)[];
export type MapEntry = [string, Postings];

/** Which bucket a term (as the encoder made it) lies in: FNV-1a. */
export function bucketOf(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
  return (h >>> 0) % BUCKETS;
}

export function idsPath(dir: string, n: number): string {
  return join(dir, `${n}.ids`);
}

function postPath(dir: string, n: number): string {
  return join(dir, `${n}.post`);
}

/** Write segment `n`: its ids and its posting lists by bucket. */
export function writeSegment(dir: string, n: number, ids: string[], entries: MapEntry[]): void {
  const parts: MapEntry[][] = Array.from({ length: BUCKETS }, () => []);
  for (const e of entries) parts[bucketOf(e[0])]!.push(e);
  const bodies = parts.map((p) => Buffer.from(JSON.stringify(p)));
  const head = Buffer.from(`${JSON.stringify(bodies.map((b) => b.length))}\n`);
  // The postings first: a reader that finds ids finds the postings they were written with.
  writeFileAtomic(postPath(dir, n), Buffer.concat([head, ...bodies]));
  // Fixed-width lines after a head naming the width, so a hit's id is one pread (reading a
  // whole segment's ids per hit cost ~50 ms a search at 100,000 messages).
  const width = Math.max(1, ...ids.map((id) => id.length));
  writeFileAtomic(idsPath(dir, n), `${String(width).padStart(ID_HEAD - 1, '0')}\n${ids.map((id) => `${id.padEnd(width)}\n`).join('')}`);
}

/** The head of a `.ids` file: the width of its lines, four digits and a newline. */
const ID_HEAD = 5;

/** Segment `n`'s message ids (empty when it has none yet). */
export function readSegmentIds(dir: string, n: number): string[] {
  try {
    const text = readFileSync(idsPath(dir, n), 'utf8');
    const body = text.slice(ID_HEAD);
    return body === '' ? [] : body.slice(0, -1).split('\n').map((l) => l.trimEnd());
  } catch {
    return [];
  }
}

/** The ids of segment `n` at the given positions (one read each); a position it lacks is absent. */
export function readSegmentIdsAt(dir: string, n: number, at: number[]): Map<number, string> {
  const out = new Map<number, string>();
  let fd: number;
  try {
    fd = openSync(idsPath(dir, n), fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch {
    return out;
  }
  try {
    const width = Number(readAll(fd, ID_HEAD, 0).toString('utf8', 0, ID_HEAD - 1));
    if (!(width >= 1)) return out;
    for (const i of at) {
      const line = readAll(fd, width, ID_HEAD + i * (width + 1)).toString('utf8').trimEnd();
      if (line !== '') out.set(i, line);
    }
    return out;
  } catch {
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * The posting lists of segment `n` in the buckets `want` (every bucket when undefined), whose
 * term `keep` accepts. Empty when the segment is missing or unreadable: the search is then
 * short of it, and says nothing wrong.
 */
export function readSegmentPostings(dir: string, n: number, want: ReadonlySet<number> | undefined, keep: (term: string) => boolean = () => true): MapEntry[] {
  let fd: number;
  try {
    fd = openSync(postPath(dir, n), fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch {
    return [];
  }
  try {
    // The head: BUCKETS decimal lengths, a few KB.
    const first = readAll(fd, 8 * BUCKETS + 2, 0);
    const nl = first.indexOf(10);
    if (nl < 0) return [];
    const lens = JSON.parse(first.toString('utf8', 0, nl)) as number[];
    const out: MapEntry[] = [];
    let off = nl + 1;
    for (let b = 0; b < lens.length; b++) {
      const len = lens[b]!;
      if (want === undefined || want.has(b)) {
        for (const e of JSON.parse(readAll(fd, len, off).toString('utf8')) as MapEntry[]) if (keep(e[0])) out.push(e);
      }
      off += len;
    }
    return out;
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}
