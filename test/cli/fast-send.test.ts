import { describe, expect, it } from 'vitest';
import { parseFastArgs } from '../../tools/cli/fast-send.js';

describe('the send fast path parser', () => {
  it('serves the plain forms', () => {
    expect(parseFastArgs(['send', 'hello', 'world'])).toEqual({ verb: 'send', words: ['hello', 'world'], to: [], json: false });
    expect(parseFastArgs(['reply', '--re', 'abc', '--json', 'ok'])).toEqual({ verb: 'reply', words: ['ok'], to: [], re: 'abc', json: true });
    expect(parseFastArgs(['send', '--to', 'a', 'hi', '--to=b', '--channel', '#ops', '--on-behalf-of', 'aaron'])).toEqual({
      verb: 'send',
      words: ['hi'],
      to: ['a', 'b'],
      channel: '#ops',
      onBehalfOf: 'aaron',
      json: false,
    });
    expect(parseFastArgs(['send', '-'])?.words).toEqual(['-']);
    expect(parseFastArgs(['send', '--', '--to', '-x', '--'])?.words).toEqual(['--to', '-x', '--']);
    expect(parseFastArgs(['send', '--to', 'a', '--', '--json'])).toMatchObject({ to: ['a'], words: ['--json'], json: false });
  });

  it('hands everything else to the full CLI', () => {
    for (const argv of [
      ['inbox'],
      ['send'],
      ['send', '--help'],
      ['send', '-h', 'x'],
      ['send', '--chanel', 'x', 'y'],
      ['send', '--to'],
      ['send', '--to', '--json', 'x'],
      ['send', '--channel', 'a', '--channel', 'b', 'x'],
      ['send', '--json', '--json', 'x'],
      ['send', 'x', '-v'],
      ['send', '--to', 'a'],
    ]) {
      expect(parseFastArgs(argv), argv.join(' ')).toBeNull();
    }
  });
});
