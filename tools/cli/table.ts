// Tables that fit the terminal (issue "The first hour"): a table as wide as its content, and
// on a terminal narrower than that, its flexible columns shrink (their cells end in `…`) so
// no row is ever wrapped by the terminal. Widths are terminal columns (tools/wire/width.ts),
// so a CJK name or an emoji does not push a row past the edge. Loaded only by the commands
// that print a table, so `attend --help` does not load string-width.

import { textWidth, truncateColumns } from '../wire/width.js';

export interface Column {
  head: string;
  /** Never wider than this (a name column need not grow with one long name). */
  max?: number;
  /** Shrinks down to this on a narrow terminal; a column without one is never cut (an id). */
  min?: number;
}

const GAP = 1;

function fit(text: string, width: number, last: boolean): string {
  const cut = truncateColumns(text, width);
  return last ? cut : cut + ' '.repeat(Math.max(0, width - textWidth(cut)));
}

/**
 * The rows under their heads, columns one space apart. `width` is the terminal's (undefined:
 * not a terminal, nothing shrinks). Flexible columns give way in `shrinkOrder` (indices, the
 * first shrinks first, each down to its `min` before the next starts); a table that cannot fit
 * even then is cut at the edge, each row ending in `…`.
 */
export function formatColumns(columns: readonly Column[], rows: readonly string[][], width: number | undefined, shrinkOrder: readonly number[] = []): string {
  const widths = columns.map((c, i) => Math.min(c.max ?? Number.POSITIVE_INFINITY, Math.max(textWidth(c.head), ...rows.map((r) => textWidth(r[i] ?? '')))));
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
  if (width !== undefined) {
    for (const i of shrinkOrder) {
      const over = total() - width;
      if (over <= 0) break;
      const min = Math.min(widths[i] ?? 0, columns[i]?.min ?? (widths[i] ?? 0));
      widths[i] = Math.max(min, (widths[i] ?? 0) - over);
    }
  }
  const line = (cells: readonly string[]) => {
    const text = cells.map((c, i) => fit(c, widths[i] ?? 0, i === cells.length - 1)).join(' '.repeat(GAP)).trimEnd();
    return width !== undefined && textWidth(text) > width ? truncateColumns(text, width) : text;
  };
  return [line(columns.map((c) => c.head)), ...rows.map(line)].join('\n');
}
