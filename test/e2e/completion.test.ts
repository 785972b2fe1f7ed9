// Shell completion, run by a real bash: the script `attend completion bash` prints, sourced,
// completes commands, subcommands and each command's own options. And the man page renders
// without a roff warning.

import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TempBus, runBin, runInProcess, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function has(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** What bash's completion offers for the words typed so far (the last is the one completed). */
function complete(script: string, words: string[]): string[] {
  const file = join(bus.dir, 'attend.bash');
  writeFileSync(file, script);
  const arr = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `source '${file}'; COMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; _attend; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter(Boolean);
}

describe('attend completion', () => {
  it('bash completes commands, subcommands and a command’s own options', () => {
    const r = runBin(['completion', 'bash'], { env: bus.env });
    expect(r.exitCode).toBe(0);
    expect(complete(r.stdout, ['attend', 'se'])).toEqual(['send']);
    expect(complete(r.stdout, ['attend', 'channels', ''])).toEqual(expect.arrayContaining(['create', 'describe', 'pin', 'unpin', '--joined', '--json']));
    expect(complete(r.stdout, ['attend', 'send', '--ch'])).toEqual(['--channel']);
    expect(complete(r.stdout, ['attend', 'inbox', '--limit', '5', '--j'])).toEqual(['--json']);
    expect(complete(r.stdout, ['attend', 'channels', 'create', '--'])).toEqual(['--json', '--help']);
    // A value of an option completes files (the shell's default), not commands.
    expect(complete(r.stdout, ['attend', 'send', '--to', ''])).toEqual([]);
  });

  it('zsh and fish scripts name every command; an unknown shell is a usage error', () => {
    const zsh = runBin(['completion', 'zsh'], { env: bus.env });
    const fish = runBin(['completion', 'fish'], { env: bus.env });
    expect(zsh.stdout).toMatch(/^#compdef attend\n/);
    for (const cmd of ['send', 'inbox', 'relay', 'completion']) {
      expect(zsh.stdout).toContain(`'${cmd}:`);
      expect(fish.stdout).toContain(`-a '${cmd}'`);
    }
    for (const shell of ['zsh', 'fish']) {
      if (!has(shell)) continue;
      // From a file: fish -n cannot read a script from a pipe ("Unable to read input file").
      const file = join(bus.dir, `attend.${shell}`);
      writeFileSync(file, shell === 'zsh' ? zsh.stdout : fish.stdout);
      const check = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
      expect(check.status, check.stderr).toBe(0);
    }
    const bad = runBin(['completion', 'tcsh'], { env: bus.env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toBe("attend: no completion for the shell 'tcsh': give bash, zsh or fish\n");
  });

  it('the executable answers --help and completion from text built ahead: the same text the full CLI prints', async () => {
    expect(existsSync('dist/tools/cli/first-commands.json')).toBe(true);
    for (const args of [[], ['--help'], ['-h'], ['completion', 'bash'], ['completion', 'zsh'], ['completion', 'fish']]) {
      const fast = runBin(args, { env: bus.env });
      const full = await runInProcess(args, { env: bus.env });
      expect(fast.exitCode, args.join(' ')).toBe(0);
      expect(fast.stdout, args.join(' ')).toBe(full.stdout);
      expect(fast.stderr).toBe('');
    }
    // A narrow COLUMNS on a pipe is not a terminal: still the same 80-column help.
    expect(runBin(['--help'], { env: { ...bus.env, COLUMNS: '40' } }).stdout).toBe((await runInProcess(['--help'], { env: bus.env })).stdout);
  });

  it.runIf(has('groff'))('the man page docs/attend.1 renders without a warning and covers every command', () => {
    const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', 'docs/attend.1'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    // Bold and underline are overstrikes on a terminal device: read the letters.
    const text = r.stdout.replace(/.\x08/g, '');
    expect(text).toContain('attend completion');
    expect(text).toContain('EXIT STATUS');
  });
});
