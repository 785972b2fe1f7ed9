// The compose box as a pure reducer (house style: gemini-cli's textBufferReducer). The
// cursor is a UTF-16 offset that never rests inside a surrogate pair, so editing never
// splits an emoji into garbage.

import { neutralize } from '../../wire/render.js';
import { type Cell, cells } from '../../wire/width.js';

export interface ComposeState {
  text: string;
  cursor: number;
  /** Sent drafts, oldest first. */
  history: string[];
  /** Where ↑/↓ is in `history`; null while editing a fresh draft. */
  historyIndex: number | null;
  /** The fresh draft put aside while browsing history, restored by ↓ past the newest. */
  stash: string;
}

export type ComposeAction =
  | { type: 'insert'; text: string }
  | { type: 'newline' }
  | { type: 'backspace' }
  | { type: 'delete' }
  /** Ctrl-W: the word before the cursor, and the blanks between it and the cursor. */
  | { type: 'deleteWord' }
  /** Ctrl-U: from the start of the current line to the cursor. */
  | { type: 'killLine' }
  | { type: 'left' }
  | { type: 'right' }
  | { type: 'home' }
  | { type: 'end' }
  | { type: 'historyPrev' }
  | { type: 'historyNext' }
  | { type: 'set'; text: string; cursor?: number }
  /** The draft was sent: remember it and start afresh. */
  | { type: 'submitted' };

const MAX_HISTORY = 200;

export function emptyCompose(history: string[] = []): ComposeState {
  return { text: '', cursor: 0, history, historyIndex: null, stash: '' };
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function prevBoundary(text: string, i: number): number {
  if (i <= 0) return 0;
  return i >= 2 && isLow(text.charCodeAt(i - 1)) ? i - 2 : i - 1;
}

function nextBoundary(text: string, i: number): number {
  if (i >= text.length) return text.length;
  return isLow(text.charCodeAt(i + 1)) ? i + 2 : i + 1;
}

/** Pasted text keeps its line breaks as `\n`; other control characters are dropped. */
function cleanInput(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/\t/g, '  ').replace(/[\u0000-\u0009\u000B-\u001F\u007F]/g, '');
}

export function composeReducer(s: ComposeState, a: ComposeAction): ComposeState {
  switch (a.type) {
    case 'insert': {
      const t = cleanInput(a.text);
      if (t.length === 0) return s;
      return { ...s, text: s.text.slice(0, s.cursor) + t + s.text.slice(s.cursor), cursor: s.cursor + t.length, historyIndex: null };
    }
    case 'newline':
      return { ...s, text: `${s.text.slice(0, s.cursor)}\n${s.text.slice(s.cursor)}`, cursor: s.cursor + 1, historyIndex: null };
    case 'backspace': {
      if (s.cursor === 0) return s;
      const at = prevBoundary(s.text, s.cursor);
      return { ...s, text: s.text.slice(0, at) + s.text.slice(s.cursor), cursor: at };
    }
    case 'delete': {
      if (s.cursor >= s.text.length) return s;
      const to = nextBoundary(s.text, s.cursor);
      return { ...s, text: s.text.slice(0, s.cursor) + s.text.slice(to) };
    }
    case 'deleteWord': {
      if (s.cursor === 0) return s;
      // At the start of a line the word before is on the line above: join them, as Backspace.
      if (s.text[s.cursor - 1] === '\n') return { ...s, text: s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), cursor: s.cursor - 1 };
      let at = s.cursor;
      while (at > 0 && (s.text[at - 1] === ' ' || s.text[at - 1] === '\t')) at--;
      while (at > 0 && !/\s/.test(s.text[at - 1] ?? '')) at--;
      return { ...s, text: s.text.slice(0, at) + s.text.slice(s.cursor), cursor: at };
    }
    case 'killLine': {
      const start = s.text.lastIndexOf('\n', s.cursor - 1) + 1;
      if (start === s.cursor) return s;
      return { ...s, text: s.text.slice(0, start) + s.text.slice(s.cursor), cursor: start };
    }
    case 'left':
      return { ...s, cursor: prevBoundary(s.text, s.cursor) };
    case 'right':
      return { ...s, cursor: nextBoundary(s.text, s.cursor) };
    case 'home': {
      // Home and End work on the current line of a multi-line draft.
      const start = s.text.lastIndexOf('\n', s.cursor - 1) + 1;
      return { ...s, cursor: start };
    }
    case 'end': {
      const nl = s.text.indexOf('\n', s.cursor);
      return { ...s, cursor: nl === -1 ? s.text.length : nl };
    }
    case 'historyPrev': {
      if (s.history.length === 0) return s;
      const idx = s.historyIndex === null ? s.history.length - 1 : Math.max(0, s.historyIndex - 1);
      const text = s.history[idx] ?? '';
      return { ...s, historyIndex: idx, stash: s.historyIndex === null ? s.text : s.stash, text, cursor: text.length };
    }
    case 'historyNext': {
      if (s.historyIndex === null) return s;
      const idx = s.historyIndex + 1;
      if (idx >= s.history.length) return { ...s, historyIndex: null, text: s.stash, cursor: s.stash.length, stash: '' };
      const text = s.history[idx] ?? '';
      return { ...s, historyIndex: idx, text, cursor: text.length };
    }
    case 'set': {
      const cursor = Math.max(0, Math.min(a.cursor ?? a.text.length, a.text.length));
      return { ...s, text: a.text, cursor };
    }
    case 'submitted': {
      const last = s.history[s.history.length - 1];
      const history = s.text.trim().length === 0 || last === s.text ? s.history : [...s.history, s.text].slice(-MAX_HISTORY);
      return emptyCompose(history);
    }
  }
}

/** Whether quitting now would lose typed text. */
export function hasDraft(s: ComposeState): boolean {
  return s.text.trim().length > 0;
}

/**
 * The draft as rows of at most `width` terminal columns, with the cursor drawn as an
 * inverse cell. The cursor is a UTF-16 offset into the draft; it sits on a grapheme
 * boundary because the compose reducer moves by code points and inserts whole keys.
 */
export function composeRows(text: string, cursor: number, width: number): { rows: { before: string; at: string; after: string }[]; cursorRow: number } {
  const w = Math.max(4, width);
  const rows: { before: string; at: string; after: string }[] = [];
  let cursorRow = 0;
  let offset = 0;
  for (const raw of text.split('\n')) {
    // Controls were dropped on input; neutralize is the guard for anything that got through,
    // and keeps printable text as it is, so offsets into `raw` still hold for printable text.
    const line = neutralize(raw);
    const same = line === raw;
    let row: Cell[] = [];
    let used = 0;
    const lineRows: Cell[][] = [];
    for (const c of cells(line)) {
      if (used + c.width > w && used > 0) {
        lineRows.push(row);
        row = [];
        used = 0;
      }
      row.push(c);
      used += c.width;
    }
    lineRows.push(row);
    const inLine = cursor - offset >= 0 && cursor - offset <= raw.length;
    // Where neutralize changed the text, offsets do not map: the cursor shows at the end.
    const local = same ? cursor - offset : line.length;
    const hasCursor = inLine;
    for (let r = 0; r < lineRows.length; r++) {
      const cs = lineRows[r] as Cell[];
      const k = hasCursor ? cs.findIndex((c) => c.index === local) : -1;
      // At the end of the line the cursor is a blank cell after the last row's text.
      const atEnd = hasCursor && local === line.length && r === lineRows.length - 1;
      if (k >= 0) {
        rows.push({ before: cs.slice(0, k).map((c) => c.text).join(''), at: cs[k]?.text ?? ' ', after: cs.slice(k + 1).map((c) => c.text).join('') });
        cursorRow = rows.length - 1;
      } else if (atEnd) {
        const full = cs.reduce((n, c) => n + c.width, 0) >= w;
        if (full) {
          rows.push({ before: cs.map((c) => c.text).join(''), at: '', after: '' });
          rows.push({ before: '', at: ' ', after: '' });
        } else rows.push({ before: cs.map((c) => c.text).join(''), at: ' ', after: '' });
        cursorRow = rows.length - 1;
      } else rows.push({ before: cs.map((c) => c.text).join(''), at: '', after: '' });
    }
    offset += raw.length + 1;
  }
  return { rows, cursorRow };
}
