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

/** Cut one line (no newlines) into rows of at most `width` columns; at most `limit` rows. */
export function wrapColumns(line: string, width: number, limit = Number.POSITIVE_INFINITY): string[] {
  const w = Math.max(2, width);
  if (NARROW.test(line)) {
    const out: string[] = [];
    if (line.length === 0) return [''];
    for (let i = 0; i < line.length && out.length < limit; i += w) out.push(line.slice(i, i + w));
    return out;
  }
  const out: string[] = [];
  let row = '';
  let used = 0;
  for (const c of cells(line)) {
    if (used + c.width > w && used > 0) {
      out.push(row);
      if (out.length >= limit) return out;
      row = '';
      used = 0;
    }
    row += c.text;
    used += c.width;
  }
  out.push(row);
  return out;
}

/** Rows `line` takes at `width` columns, without building them. */
export function rowsOf(line: string, width: number): number {
  const w = Math.max(2, width);
  if (NARROW.test(line)) return Math.max(1, Math.ceil(line.length / w));
  let rows = 1;
  let used = 0;
  for (const c of cells(line)) {
    if (used + c.width > w && used > 0) {
      rows++;
      used = 0;
    }
    used += c.width;
  }
  return rows;
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
