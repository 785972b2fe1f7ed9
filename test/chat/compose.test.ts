import { describe, expect, it } from 'vitest';
import { type ComposeAction, type ComposeState, composeReducer, emptyCompose, hasDraft } from '../../tools/chat/state/compose.js';

function run(actions: ComposeAction[], start: ComposeState = emptyCompose()): ComposeState {
  return actions.reduce(composeReducer, start);
}
const type = (text: string): ComposeAction => ({ type: 'insert', text });

describe('compose reducer', () => {
  it.each<[string, ComposeAction[], string, number]>([
    ['typing', [type('hi'), type(' there')], 'hi there', 8],
    ['left then insert', [type('ac'), { type: 'left' }, type('b')], 'abc', 2],
    ['backspace at start does nothing', [type('a'), { type: 'home' }, { type: 'backspace' }], 'a', 0],
    ['delete under the cursor', [type('abc'), { type: 'home' }, { type: 'delete' }], 'bc', 0],
    ['delete at end does nothing', [type('abc'), { type: 'delete' }], 'abc', 3],
    ['right stops at the end', [type('a'), { type: 'right' }, { type: 'right' }], 'a', 1],
    ['newline inserts a line break', [type('a'), { type: 'newline' }, type('b')], 'a\nb', 3],
    ['home goes to the start of the current line', [type('ab'), { type: 'newline' }, type('cd'), { type: 'home' }], 'ab\ncd', 3],
    ['end goes to the end of the current line', [type('ab'), { type: 'newline' }, type('cd'), { type: 'set', text: 'ab\ncd', cursor: 0 }, { type: 'end' }], 'ab\ncd', 2],
    ['backspace removes a whole emoji', [type('a😀'), { type: 'backspace' }], 'a', 1],
    ['left steps over a whole emoji', [type('😀'), { type: 'left' }, type('x')], 'x😀', 1],
    ['pasted CRLF becomes newlines, controls are dropped', [type('a\r\nb\x1b[31m\x07')], 'a\nb[31m', 7],
    ['Ctrl-W deletes the blanks before the cursor and the word before them', [type('ship the build  '), { type: 'deleteWord' }], 'ship the ', 9],
    ['Ctrl-W: one word', [type('ship the build  '), { type: 'deleteWord' }], 'ship the ', 9],
    ['Ctrl-W twice', [type('ship the build'), { type: 'deleteWord' }, { type: 'deleteWord' }], 'ship ', 5],
    ['Ctrl-W in the middle keeps what follows', [type('@Hana hi there'), { type: 'set', text: '@Hana hi there', cursor: 8 }, { type: 'deleteWord' }], '@Hana  there', 6],
    ['Ctrl-W takes a whole emoji word', [type('ok 😀🎉'), { type: 'deleteWord' }], 'ok ', 3],
    ['Ctrl-W at the start of a line joins it to the line above', [type('ab'), { type: 'newline' }, { type: 'deleteWord' }], 'ab', 2],
    ['Ctrl-W at the start does nothing', [type('ab'), { type: 'home' }, { type: 'deleteWord' }], 'ab', 0],
    ['Ctrl-U kills to the start of the line', [type('hello world'), { type: 'left' }, { type: 'killLine' }], 'd', 0],
    ['Ctrl-U kills only the current line of a draft', [type('keep'), { type: 'newline' }, type('drop'), { type: 'killLine' }], 'keep\n', 5],
    ['Ctrl-U at the start of a line does nothing', [type('a'), { type: 'newline' }, { type: 'killLine' }], 'a\n', 2],
  ])('%s', (_name, actions, text, cursor) => {
    const s = run(actions);
    expect(s.text).toBe(text);
    expect(s.cursor).toBe(cursor);
  });

  it('recalls history with up and down and restores the fresh draft', () => {
    let s = run([type('first'), { type: 'submitted' }, type('second'), { type: 'submitted' }, type('draft')]);
    expect(s.history).toEqual(['first', 'second']);
    s = composeReducer(s, { type: 'historyPrev' });
    expect(s.text).toBe('second');
    s = composeReducer(s, { type: 'historyPrev' });
    expect(s.text).toBe('first');
    s = composeReducer(s, { type: 'historyPrev' });
    expect(s.text).toBe('first');
    s = composeReducer(s, { type: 'historyNext' });
    expect(s.text).toBe('second');
    s = composeReducer(s, { type: 'historyNext' });
    expect(s.text).toBe('draft');
    expect(s.historyIndex).toBeNull();
  });

  it('does not record blank or repeated drafts', () => {
    const s = run([type('same'), { type: 'submitted' }, type('same'), { type: 'submitted' }, type('  '), { type: 'submitted' }]);
    expect(s.history).toEqual(['same']);
  });

  it('knows when quitting would lose a draft', () => {
    expect(hasDraft(run([type('   ')]))).toBe(false);
    expect(hasDraft(run([type('x')]))).toBe(true);
  });
});
