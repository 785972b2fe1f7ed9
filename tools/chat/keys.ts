// The chat's keys as one table (issue 9 item 4): each row names its chords, what they do,
// and the action the key handler runs. /help, the status line's key help, `attend chat
// --help` and the handler all read this table, so they cannot disagree.
//
// Pure data and pure functions, with no imports: `attend chat --help` is built on the CLI's
// start path, which must not load the chat UI (test/architecture.test.ts).

/** What a key does; App.tsx has one handler per action (a Record, so none is missing). */
export type KeyAction =
  | 'send'
  | 'newline'
  | 'historyPrev'
  | 'historyNext'
  | 'complete'
  | 'tabPrev'
  | 'tabNext'
  | 'tabJump'
  | 'scrollBack'
  | 'scrollForward'
  | 'selectOlder'
  | 'selectNewer'
  | 'left'
  | 'right'
  | 'home'
  | 'end'
  | 'backspace'
  | 'delete'
  | 'deleteWord'
  | 'killLine'
  | 'quit';

interface KeyRow {
  /** Chords in the order they are shown, each with the action it runs. */
  keys: readonly (readonly [chord: string, action: KeyAction])[];
  /** What the row does, for /help and `attend chat --help`. */
  help: string;
  /** The word the status line shows after the row's first chord per action. */
  brief?: string;
  /** The same while a message is selected (▶). */
  briefSelected?: string;
}

/**
 * Chords are written as they are decoded (decodeKey): `Enter`, `Alt-Enter`, `Ctrl-U`, `↑`,
 * `Alt-↑`, `PgUp`, and `Alt-1..9` for the nine digits.
 */
export const KEY_TABLE: readonly KeyRow[] = [
  { keys: [['Enter', 'send']], help: 'send the draft (with a message selected ▶: reply to it)', brief: 'send', briefSelected: 'replies to ▶' },
  { keys: [['Alt-Enter', 'newline'], ['Shift-Enter', 'newline'], ['Ctrl-J', 'newline']], help: 'a new line in the draft', brief: 'newline' },
  { keys: [['↑', 'historyPrev'], ['↓', 'historyNext']], help: 'recall earlier drafts' },
  { keys: [['Tab', 'complete']], help: 'complete @names #channels /commands, fuzzily (again: cycle); on an empty draft: next tab', brief: 'complete' },
  {
    keys: [['Shift-Tab', 'tabPrev'], ['Ctrl-←', 'tabPrev'], ['Ctrl-→', 'tabNext'], ['Alt-←', 'tabPrev'], ['Alt-→', 'tabNext']],
    help: 'switch tabs',
  },
  { keys: [['Alt-1..9', 'tabJump']], help: 'jump to a tab' },
  { keys: [['PgUp', 'scrollBack'], ['PgDn', 'scrollForward']], help: 'scroll the feed (End on an empty draft follows the newest again)', brief: 'scroll' },
  {
    keys: [['Alt-↑', 'selectOlder'], ['Alt-↓', 'selectNewer'], ['Ctrl-↑', 'selectOlder'], ['Ctrl-↓', 'selectNewer']],
    help: 'select a message (▶): Enter then replies to it, and so does /reply; down past the newest lets go',
    brief: 'select',
    briefSelected: 'move',
  },
  {
    keys: [['←', 'left'], ['→', 'right'], ['Home', 'home'], ['Ctrl-A', 'home'], ['End', 'end'], ['Ctrl-E', 'end']],
    help: 'move in the draft (Home and End: the current line)',
  },
  {
    keys: [['Backspace', 'backspace'], ['Delete', 'delete'], ['Ctrl-W', 'deleteWord'], ['Ctrl-U', 'killLine']],
    help: 'delete: the character before, the character under the cursor, the word before, to the start of the line',
  },
  { keys: [['Esc', 'quit'], ['Ctrl-C', 'quit']], help: 'quit (asks first if a draft would be lost); Esc first lets go of a selection', brief: 'quit', briefSelected: 'unselects' },
];

/** A chord pattern matches the decoded chord: `Alt-1..9` stands for `Alt-1` … `Alt-9`. */
function chordMatches(pattern: string, chord: string): boolean {
  if (pattern === chord) return true;
  const m = /^(.*-)1\.\.9$/.exec(pattern);
  return m !== null && chord.length === (m[1] ?? '').length + 1 && chord.startsWith(m[1] ?? '') && /[1-9]$/.test(chord);
}

/** The action a decoded chord runs, or null when no row binds it. */
export function actionFor(chord: string, table: readonly KeyRow[] = KEY_TABLE): KeyAction | null {
  for (const row of table) for (const [pattern, action] of row.keys) if (chordMatches(pattern, chord)) return action;
  return null;
}

/** The subset of Ink's Key that decoding reads. */
export interface KeyFlags {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  ctrl?: boolean;
  shift?: boolean;
  tab?: boolean;
  backspace?: boolean;
  delete?: boolean;
  meta?: boolean;
}

type Decoded = { chord: string; count: number } | { text: string } | null;

/**
 * One key as a chord name, or typed text. `raw` is the bytes the terminal sent (Ink's
 * parse loses some distinctions the raw sequence keeps). Null for a mouse report, which the
 * raw listener (hooks/use-raw-input.ts) handles.
 */
export function decodeKey(input: string, key: KeyFlags, raw: string): Decoded {
  if (/\[<\d+;\d+;\d+[Mm]/.test(raw)) return null;
  const one = (chord: string) => ({ chord, count: 1 });
  // Ink reports Esc with meta set, so it is decoded before anything that reads meta.
  if (key.escape) return one('Esc');
  const mod = key.ctrl ? 'Ctrl-' : key.meta ? 'Alt-' : '';
  if (key.return) return one(key.meta ? 'Alt-Enter' : key.shift ? 'Shift-Enter' : 'Enter');
  if (raw === '\n') return one('Ctrl-J');
  if (key.tab) return one(key.shift ? 'Shift-Tab' : 'Tab');
  if (key.pageUp) return one('PgUp');
  if (key.pageDown) return one('PgDn');
  // Alt-↑ arrives as ESC[1;3A (tmux, xterm) or ESC ESC[A: Ink reports both as meta.
  if (key.upArrow) return one(`${mod}↑`);
  if (key.downArrow) return one(`${mod}↓`);
  if (key.leftArrow) return one(`${mod}←`);
  if (key.rightArrow) return one(`${mod}→`);
  if (key.home) return one('Home');
  if (key.end) return one('End');
  if (key.backspace) return one('Backspace');
  // Keys repeated faster than the terminal flushes arrive as one chunk of DELs.
  if (/^[\x7f\b]{2,}$/.test(raw)) return { chord: 'Backspace', count: raw.length };
  // Ink reports both DEL (what Backspace sends) and the Delete key as `delete`; the raw
  // sequence tells them apart.
  if (key.delete) return one(raw.includes('[3~') ? 'Delete' : 'Backspace');
  if (key.ctrl || key.meta) return input.length === 1 ? one(`${mod}${input.toUpperCase()}`) : one(`${mod}?`);
  return input.length > 0 ? { text: input } : null;
}

const ARROW = /^[↑↓←→]$/;

/** Split a chord into its modifier prefix and its key: `Alt-↑` → [`Alt-`, `↑`]. */
function splitChord(c: string): [string, string] {
  const m = /^((?:Ctrl|Alt|Shift)-)(.+)$/.exec(c);
  return m ? [m[1] ?? '', m[2] ?? ''] : ['', c];
}

/** Arrows under one modifier share it: `Alt-↑`, `Alt-↓` → `Alt-↑/↓`; `PgUp`, `PgDn` → `PgUp/PgDn`. */
export function joinChords(chords: readonly string[]): string {
  const out: string[] = [];
  let last: [string, string] | null = null;
  for (const c of chords) {
    const [mod, k] = splitChord(c);
    const pairs = last !== null && last[0] === mod && ((ARROW.test(last[1]) && ARROW.test(k)) || (last[1] === 'PgUp' && k === 'PgDn'));
    if (pairs) out[out.length - 1] = `${out[out.length - 1] ?? ''}/${k}`;
    else out.push(c);
    last = [mod, k];
  }
  return out.join(', ');
}

/** One line per row: the chords, then what they do. */
export function keyHelpLines(table: readonly KeyRow[] = KEY_TABLE): string[] {
  return table.map((row) => `${joinChords(row.keys.map(([c]) => c))} — ${row.help}`);
}

/** The first chord of each action in a row, for the status line. */
function briefChords(row: KeyRow): string {
  const seen = new Set<KeyAction>();
  const chords: string[] = [];
  for (const [c, a] of row.keys) {
    if (seen.has(a)) continue;
    seen.add(a);
    chords.push(c);
  }
  return joinChords(chords);
}

/** The status line's key help, with or without a selected message. */
export function statusHelp(selected: boolean, table: readonly KeyRow[] = KEY_TABLE): string {
  if (selected) {
    const parts = table.filter((r) => r.briefSelected).map((r) => `${briefChords(r)} ${r.briefSelected}`);
    return [...parts, 'a draft starting @Name or #channel goes there instead'].join(' · ');
  }
  const parts = table.filter((r) => r.brief).map((r) => `${briefChords(r)} ${r.brief}`);
  // /help is a command, not a key: it goes before the last entry (quit).
  parts.splice(parts.length - 1, 0, '/help');
  return parts.join(' · ');
}
