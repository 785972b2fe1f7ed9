// Terminal widths and wrapping (tools/wire/width.ts), shared by the chat's rows and the CLI's
// tables: rows break at word boundaries, a word longer than a row is cut, and rowsOf counts
// what wrapColumns builds.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowsOf, textWidth, wrapColumns } from '../../tools/wire/width.js';

describe('wrapColumns', () => {
  it('breaks at the last space that fits, never inside a word', () => {
    expect(wrapColumns('the quick brown fox jumps over the lazy dog', 12)).toEqual(['the quick', 'brown fox', 'jumps over', 'the lazy dog']);
    expect(wrapColumns('日本語 の テキスト を 折り返す', 8)).toEqual(['日本語', 'の', 'テキスト', 'を', '折り返す']);
  });

  it('cuts a word longer than a row where the row ends', () => {
    expect(wrapColumns('see https://example.com/a/very/long/path ok', 10)).toEqual(['see', 'https://ex', 'ample.com/', 'a/very/lon', 'g/path ok']);
  });

  it('keeps every row within the width, loses no word, and rowsOf agrees (property)', () => {
    const word = fc.stringMatching(/^[a-z日本]{1,14}$/);
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 30 }), fc.integer({ min: 2, max: 40 }), (words, width) => {
        const line = words.join(' ');
        const rows = wrapColumns(line, width);
        for (const r of rows) expect(textWidth(r)).toBeLessThanOrEqual(width);
        expect(rows.join('').replace(/ /g, '')).toBe(line.replace(/ /g, ''));
        expect(rowsOf(line, width)).toBe(rows.length);
        // A word that fits a row is never split across two.
        for (const w of words) if (textWidth(w) <= width) expect(rows.some((r) => r.split(' ').includes(w))).toBe(true);
      }),
    );
  });
});
