// The key table (tools/chat/keys.ts): what the terminal sends decodes to the chords the
// table names, every action is bound, and the help texts are built from the same rows.
import { describe, expect, it } from 'vitest';
import { actionFor, decodeKey, joinChords, KEY_TABLE, type KeyFlags, keyHelpLines, statusHelp } from '../../tools/chat/keys.js';

describe('decodeKey', () => {
  it.each<[string, string, KeyFlags, string, string | null]>([
    ['Enter', '', { return: true }, '\r', 'Enter'],
    ['Alt-Enter', '', { return: true, meta: true }, '\x1b\r', 'Alt-Enter'],
    ['Ctrl-J (a bare line feed)', '', {}, '\n', 'Ctrl-J'],
    ['Esc (Ink sets meta too)', '', { escape: true, meta: true }, '\x1b', 'Esc'],
    ['Ctrl-C', 'c', { ctrl: true }, '\x03', 'Ctrl-C'],
    ['Tab', '', { tab: true }, '\t', 'Tab'],
    ['Shift-Tab', '', { tab: true, shift: true }, '\x1b[Z', 'Shift-Tab'],
    ['↑', '', { upArrow: true }, '\x1b[A', '↑'],
    ['Alt-↑ as tmux sends it', '', { upArrow: true, meta: true }, '\x1b[1;3A', 'Alt-↑'],
    ['Ctrl-↓', '', { downArrow: true, ctrl: true }, '\x1b[1;5B', 'Ctrl-↓'],
    ['Ctrl-←', '', { leftArrow: true, ctrl: true }, '\x1b[1;5D', 'Ctrl-←'],
    ['PgUp', '', { pageUp: true }, '\x1b[5~', 'PgUp'],
    ['Home', '', { home: true }, '\x1b[H', 'Home'],
    ['Ctrl-A', 'a', { ctrl: true }, '\x01', 'Ctrl-A'],
    ['DEL is Backspace', '', { delete: true }, '\x7f', 'Backspace'],
    ['the Delete key', '', { delete: true }, '\x1b[3~', 'Delete'],
    ['Alt-3', '3', { meta: true }, '\x1b3', 'Alt-3'],
    ['Ctrl-W', 'w', { ctrl: true }, '\x17', 'Ctrl-W'],
    ['Ctrl-U', 'u', { ctrl: true }, '\x15', 'Ctrl-U'],
  ])('%s', (_name, input, key, raw, chord) => {
    expect(decodeKey(input, key, raw)).toEqual({ chord, count: 1 });
  });

  it('counts a burst of DELs as that many Backspaces', () => {
    expect(decodeKey('', { delete: true }, '\x7f\x7f\x7f')).toEqual({ chord: 'Backspace', count: 3 });
  });
  it('passes typed text through and drops mouse reports', () => {
    expect(decodeKey('hé', {}, 'hé')).toEqual({ text: 'hé' });
    expect(decodeKey('', {}, '\x1b[<64;10;5M')).toBeNull();
  });
});

describe('the key table', () => {
  it('binds each chord it names to its action, including the Alt-1..9 range', () => {
    expect(actionFor('Enter')).toBe('send');
    expect(actionFor('Alt-Enter')).toBe('newline');
    expect(actionFor('Alt-↑')).toBe('selectOlder');
    expect(actionFor('↑')).toBe('historyPrev');
    expect(actionFor('Alt-1')).toBe('tabJump');
    expect(actionFor('Alt-9')).toBe('tabJump');
    expect(actionFor('Alt-0')).toBeNull();
    expect(actionFor('Ctrl-W')).toBe('deleteWord');
    expect(actionFor('Ctrl-U')).toBe('killLine');
    expect(actionFor('Ctrl-Z')).toBeNull();
  });

  it('binds no chord twice', () => {
    const chords = KEY_TABLE.flatMap((r) => r.keys.map(([c]) => c));
    expect(new Set(chords).size).toBe(chords.length);
  });

  it('names only chords decodeKey can produce', () => {
    const decodable = /^((Ctrl|Alt|Shift)-)?(Enter|Esc|Tab|[↑↓←→]|PgUp|PgDn|Home|End|Backspace|Delete|[A-Z]|1\.\.9)$/;
    for (const row of KEY_TABLE) for (const [c] of row.keys) expect(c).toMatch(decodable);
  });

  it('builds /help, --help and the status line from the rows', () => {
    const lines = keyHelpLines();
    expect(lines).toHaveLength(KEY_TABLE.length);
    expect(lines).toContain('Alt-↑/↓, Ctrl-↑/↓ — select a message (▶): Enter then replies to it, and so does /reply; down past the newest lets go');
    expect(statusHelp(false)).toBe('Enter send · Alt-Enter newline · Tab complete · PgUp/PgDn scroll · Alt-↑/↓ select · /help · Esc quit');
    expect(statusHelp(true)).toBe('Enter replies to ▶ · Alt-↑/↓ move · Esc unselects · a draft starting @Name or #channel goes there instead');
    // A changed row changes every text built from it.
    const table = [{ keys: [['Ctrl-S', 'send']] as const, help: 'send it', brief: 'go' }, { keys: [['Esc', 'quit']] as const, help: 'leave', brief: 'quit' }];
    expect(keyHelpLines(table)).toEqual(['Ctrl-S — send it', 'Esc — leave']);
    expect(statusHelp(false, table)).toBe('Ctrl-S go · /help · Esc quit');
    expect(actionFor('Enter', table)).toBeNull();
  });

  it('joins arrows under one modifier', () => {
    expect(joinChords(['Shift-Tab', 'Ctrl-←', 'Ctrl-→', 'Alt-←', 'Alt-→'])).toBe('Shift-Tab, Ctrl-←/→, Alt-←/→');
    expect(joinChords(['PgUp', 'PgDn'])).toBe('PgUp/PgDn');
    expect(joinChords(['Esc', 'Ctrl-C'])).toBe('Esc, Ctrl-C');
  });
});
