// Terminal columns, not code points. A CJK character or most emoji take two columns, a
// combining mark none; wrapping by code points made such lines twice the screen width, and
// Ink cut them off (issue #5 "Bad input": lines render wrapped, never cut). Widths come from
// string-width, the same function Ink lays text out with, so a row we make fits the row Ink
// draws. Pure.

import stringWidth from 'string-width';

// Printable ASCII is one column per character: the common case skips segmentation.
const NARROW = /^[\x20-\x7e]*$/;
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Columns `text` takes on a terminal. */
export function textWidth(text: string): number {
  return NARROW.test(text) ? text.length : stringWidth(text);
}

export interface Cell {
  text: string;
  /** Offset of the grapheme in the string, UTF-16 units. */
  index: number;
  width: number;
}

/** The grapheme clusters of `text` with their columns, lazily (a 10,000-character line stops early). */
export function* cells(text: string): Generator<Cell> {
  if (NARROW.test(text)) {
    for (let i = 0; i < text.length; i++) yield { text: text[i] as string, index: i, width: 1 };
    return;
  }
  for (const s of segmenter.segment(text)) yield { text: s.segment, index: s.index, width: stringWidth(s.segment) };
}

/**
 * The rows of one line (no newlines) at `width` columns, lazily: broken after the last space
 * that fits (the space at a break is not shown), and a word longer than a row cut where the
 * row ends. Words stay whole, as a reader expects of prose (issue "The first hour": the chat
 * broke lines mid-word).
 */
function* rowsIn(line: string, width: number): Generator<string> {
  const w = Math.max(2, width);
  if (NARROW.test(line)) {
    let i = 0;
    if (line.length === 0) yield '';
    while (i < line.length) {
      if (line.length - i <= w) {
        yield line.slice(i);
        return;
      }
      const space = line.lastIndexOf(' ', i + w);
      if (space > i) {
        yield line.slice(i, space);
        i = space + 1;
      } else {
        yield line.slice(i, i + w);
        i += w;
      }
    }
    return;
  }
  let row: Cell[] = [];
  let used = 0;
  const text = (cs: Cell[]) => cs.map((c) => c.text).join('');
  for (const c of cells(line)) {
    if (used + c.width > w && used > 0 && c.text === ' ') {
      // A space where the row is full is the break itself.
      yield text(row);
      row = [];
      used = 0;
      continue;
    }
    while (used + c.width > w && used > 0) {
      let space = -1;
      for (let k = row.length - 1; k > 0; k--) {
        if (row[k]!.text === ' ') {
          space = k;
          break;
        }
      }
      yield text(space > 0 ? row.slice(0, space) : row);
      row = space > 0 ? row.slice(space + 1) : [];
      used = row.reduce((n, x) => n + x.width, 0);
    }
    row.push(c);
    used += c.width;
  }
  yield text(row);
}

/** Cut one line (no newlines) into rows of at most `width` columns, at word boundaries; at most `limit` rows. */
export function wrapColumns(line: string, width: number, limit = Number.POSITIVE_INFINITY): string[] {
  const out: string[] = [];
  if (limit <= 0) return out;
  for (const row of rowsIn(line, width)) {
    out.push(row);
    if (out.length >= limit) break;
  }
  return out;
}

/** Rows `line` takes at `width` columns (as wrapColumns wraps it), without keeping them. */
export function rowsOf(line: string, width: number): number {
  let rows = 0;
  for (const _ of rowsIn(line, width)) rows++;
  return Math.max(1, rows);
}

/** `text` cut to `width` columns, ending in `…` when it was cut. */
export function truncateColumns(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const c of cells(text)) {
    if (used + c.width > width - 1) break;
    out += c.text;
    used += c.width;
  }
  return `${out}…`;
}
