import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../tools/cli/cli.js';
import type { CtxOptions } from '../../tools/cli/context.js';
import { parseFastArgs, parseFastWhoami, runFastSend, runFastWhoami } from '../../tools/cli/fast-send.js';
import { type FakeSession, useTempBus } from '../helpers/temp-bus.js';

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

describe('the send fast path and the full CLI agree', () => {
  const session = useTempBus(() => {});

  async function both(argv: string[], env: Record<string, string>, cwd: string) {
    const run = async (path: 'fast' | 'full') => {
      let stdout = '';
      let stderr = '';
      const opts: CtxOptions = { env, cwd, stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, stdin: Readable.from(['from stdin\n']) };
      let exitCode: number;
      if (path === 'fast') {
        const args = parseFastArgs(argv);
        expect(args, `the fast path serves ${argv.join(' ')}`).not.toBeNull();
        exitCode = (await runFastSend(args!, opts)).exitCode;
      } else exitCode = (await runCli(argv, opts)).exitCode;
      // Ids differ between the two runs; everything else must not.
      const norm = (t: string) => t.replace(/\b[0-9a-z]{12}-[0-9a-z]{8}\b/g, '<id>').replace(/"files": \[[^\]]*\]/g, '"files": [...]');
      return { exitCode, stdout: norm(stdout), stderr: norm(stderr) };
    };
    return { fast: await run('fast'), full: await run('full') };
  }

  it.each([
    [['send', 'hello there']],
    [['send', '--json', 'hello as json']],
    [['send', '-']],
    [['send', '--to', 'ghost', 'nobody by that name']],
    [['send', '--to', 'peer', 'to the peer']],
    [['send', '--channel', 'nope', 'no such channel']],
    [['send', '--channel', 'bad name!', 'invalid channel']],
    [['send', '--re', 'not/an/id', 'bad re']],
    [['send', '--on-behalf-of', 'a b', 'bad principal']],
    [['send', ' ']],
    [['reply', 'nothing shown yet']],
    [['reply', '--re', 'nosuchmessage0', 'missing parent']],
  ])('%j: same exit code, stdout and stderr through both paths', async (argv) => {
    const me: FakeSession = session({ name: 'me' });
    session({ name: 'peer' });
    const r = await both(argv, me.env, me.cwd);
    expect(r.fast).toEqual(r.full);
    // Positive control: each case says something (an id, or one error line).
    expect(r.fast.stdout.includes('<id>') || /^attend: /.test(r.fast.stderr)).toBe(true);
  });
});

describe('attend whoami on the fast path', () => {
  const session = useTempBus(() => {});

  it('serves whoami and whoami --json only', () => {
    expect(parseFastWhoami(['whoami'])).toEqual({ json: false });
    expect(parseFastWhoami(['whoami', '--json'])).toEqual({ json: true });
    for (const argv of [['whoami', '--card'], ['whoami', '--help'], ['whoami', '--json', '--json'], ['whoami', 'x'], ['send', 'x']]) expect(parseFastWhoami(argv), argv.join(' ')).toBeNull();
  });

  it.each([[['whoami']], [['whoami', '--json']]])('%j: the same exit code, stdout and stderr as the full CLI, for a session and for the person', async (argv) => {
    const me: FakeSession = session({ name: 'me' });
    for (const [env, cwd] of [[me.env, me.cwd], [{ ...me.env, CLAUDECODE: '', CLAUDE_PID: '', CLAUDE_CODE_SESSION_ID: '' }, me.cwd]] as const) {
      const run = async (path: 'fast' | 'full') => {
        let stdout = '';
        let stderr = '';
        const opts: CtxOptions = { env, cwd, stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, stdin: Readable.from([]) };
        const exitCode = path === 'fast' ? runFastWhoami(parseFastWhoami(argv)!, opts).exitCode : (await runCli(argv, opts)).exitCode;
        return { exitCode, stdout, stderr };
      };
      const fast = await run('fast');
      expect(fast).toEqual(await run('full'));
      expect(fast.stdout).toMatch(/"?from"?:\s+"?(claude|external):/);
    }
  });
});

