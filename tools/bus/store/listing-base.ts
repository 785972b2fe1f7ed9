// The listing cache's base file (tools/bus/store/listing-cache.ts), read by blocks. It has two
// sections, both sorted, so the newest page, page N, `--before` and a message's replies are
// found by reading a few blocks of it rather than parsing it:
//
//   entries:  <id> <time> <re> [<from> <to>]\n    by (time, id), the order every listing uses
//   replies:  <re> <id>\n                         by (re, id)
//
// (the entry line: tools/bus/store/listing-entry.ts).

import { dirname } from 'node:path';
import { readAll } from './atomic.js';

const BLOCK = 64 * 1024;
/** Blocks of a base file kept in memory per open listing. */
const BLOCKS_KEPT = 64;

/** A cache that does not read as written (edited, cut short): the caller rebuilds it. */
export class ListingCorrupt extends Error {
  /** The cache's directory (listingCacheDir). */
  readonly cache: string;
  constructor(file: string) {
    super(`listing cache ${file} is corrupt`);
    this.cache = dirname(file);
  }
}

export class Blocks {
  private readonly cache = new Map<number, Buffer>();
  constructor(
    readonly fd: number,
    readonly size: number,
  ) {}

  private block(i: number): Buffer {
    let b = this.cache.get(i);
    if (b === undefined) {
      b = readAll(this.fd, Math.min(BLOCK, this.size - i * BLOCK), i * BLOCK);
      if (this.cache.size >= BLOCKS_KEPT) this.cache.delete(this.cache.keys().next().value as number);
      this.cache.set(i, b);
    }
    return b;
  }

  /** The first newline at or after `pos` and before `end`, or -1. */
  nextNewline(pos: number, end: number): number {
    while (pos < end) {
      const bi = Math.floor(pos / BLOCK);
      const b = this.block(bi);
      const k = b.indexOf(10, pos - bi * BLOCK);
      if (k >= 0) return bi * BLOCK + k < end ? bi * BLOCK + k : -1;
      if (b.length < BLOCK) return -1;
      pos = (bi + 1) * BLOCK;
    }
    return -1;
  }

  /** The last newline before `pos` and at or after `start`, or -1. */
  prevNewline(pos: number, start: number): number {
    while (pos > start) {
      const bi = Math.floor((pos - 1) / BLOCK);
      const b = this.block(bi);
      const k = b.lastIndexOf(10, pos - 1 - bi * BLOCK);
      if (k >= 0) return bi * BLOCK + k >= start ? bi * BLOCK + k : -1;
      pos = bi * BLOCK;
    }
    return -1;
  }

  /** How many newlines lie in [a, b). */
  countNewlines(a: number, b: number): number {
    let n = 0;
    let pos = a;
    while (pos < b) {
      const bi = Math.floor(pos / BLOCK);
      const blk = this.block(bi);
      const base = bi * BLOCK;
      const end = Math.min(b - base, blk.length);
      for (let k = blk.indexOf(10, pos - base); k >= 0 && k < end; k = blk.indexOf(10, k + 1)) n++;
      if (blk.length < BLOCK) break;
      pos = base + BLOCK;
    }
    return n;
  }

  text(a: number, b: number): string {
    if (b <= a) return '';
    const first = Math.floor(a / BLOCK);
    const last = Math.floor((b - 1) / BLOCK);
    if (first === last) return this.block(first).toString('utf8', a - first * BLOCK, b - first * BLOCK);
    const parts: Buffer[] = [];
    for (let i = first; i <= last; i++) {
      const blk = this.block(i);
      parts.push(blk.subarray(i === first ? a - i * BLOCK : 0, i === last ? b - i * BLOCK : blk.length));
    }
    return Buffer.concat(parts).toString('utf8');
  }
}

/** One sorted section of a base file: lines in [start, end), each ending in a newline. */
export class Section {
  constructor(
    private readonly blocks: Blocks,
    readonly start: number,
    readonly end: number,
    private readonly where: string,
  ) {}

  /** The line that begins at `s`, and where the next one begins. */
  lineAt(s: number): { text: string; next: number } {
    const nl = this.blocks.nextNewline(s, this.end);
    if (nl < 0) throw new ListingCorrupt(this.where);
    return { text: this.blocks.text(s, nl), next: nl + 1 };
  }

  /** The line that ends just before `pos` (a line start or the end), and where it begins. */
  lineBefore(pos: number): { text: string; start: number } {
    const nl = this.blocks.prevNewline(pos - 1, this.start);
    const s = nl < 0 ? this.start : nl + 1;
    return { text: this.blocks.text(s, pos - 1), start: s };
  }

  /** How many lines begin in [a, b) (both line starts). */
  countLines(a: number, b: number): number {
    return this.blocks.countNewlines(a, b);
  }

  /** The first line start at or after `pos`. */
  private lineStartFrom(pos: number): number {
    if (pos <= this.start) return this.start;
    const nl = this.blocks.nextNewline(pos - 1, this.end);
    return nl < 0 ? this.end : nl + 1;
  }

  /** Where the first line with `below(line)` false begins (the lines are sorted by it). */
  lowerBound(below: (line: string) => boolean): number {
    let lo = this.start;
    let hi = this.end;
    while (hi - lo > 2048) {
      const s = this.lineStartFrom((lo + hi) >> 1);
      if (s >= hi) break;
      const { text, next } = this.lineAt(s);
      if (below(text)) lo = next;
      else hi = s;
    }
    while (lo < hi) {
      const { text, next } = this.lineAt(lo);
      if (!below(text)) return lo;
      lo = next;
    }
    return lo;
  }
}
