// Shell completion, run by the real shells: the script `attend completion bash|zsh|fish`
// prints, loaded as its help says, completes commands, subcommands and each command's own
// options (bash through its completion function, zsh through its completion system on a
// pseudo-terminal, fish through `complete -C`). And the man page renders without a roff
// warning.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * What zsh's completion system offers when Tab is pressed after `line`: an interactive `zsh -f`
 * on a pseudo-terminal (zpty) runs compinit, sources the script, and has Tab pressed; compadd
 * writes each match it is given to a file, and a function run after completion marks the end.
 */
function zshComplete(script: string, line: string): string[] {
  const dir = bus.dir;
  const out = join(dir, 'zsh-matches');
  writeFileSync(join(dir, '_attend'), script);
  writeFileSync(
    join(dir, 'setup.zsh'),
    `autoload -Uz compinit && compinit -u -D
source ${dir}/_attend
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return; fi
  local -a hits
  builtin compadd -A hits "$@"
  print -rl -- $hits >> ${out}
  builtin compadd "$@"
}
_capture_done() { print -- '--done--' >> ${out}; }
comppostfuncs=(_capture_done)
`,
  );
  writeFileSync(out, '');
  // The wait is for the end mark, up to 10 s; the pty is closed either way.
  const drive = `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'source ${dir}/setup.zsh'
zpty -w -n z "$1"$'\t'
for i in {1..200}; do grep -qx -- '--done--' ${out} && break; sleep 0.05; done
zpty -d z
grep -qx -- '--done--' ${out} || { print -u2 'zsh did not complete'; exit 1; }
`;
  const r = spawnSync('zsh', ['-f', '-c', drive, 'zsh', line], { encoding: 'utf8', cwd: dir });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return readFileSync(out, 'utf8').split('\n').filter((l) => l !== '' && l !== '--done--');
}

/** What fish offers for `line` (`complete -C`: the candidates for the word being typed). */
function fishComplete(script: string, line: string): string[] {
  const file = join(bus.dir, 'attend.fish');
  writeFileSync(file, script);
  const r = spawnSync('fish', ['--no-config', '-c', 'source $argv[1]; and complete -C $argv[2]', file, line], { encoding: 'utf8', cwd: bus.dir });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0] ?? '');
}

describe('attend completion', () => {
  it('bash completes commands, subcommands and a command’s own options', () => {
    const r = runBin(['completion', 'bash'], { env: bus.env });
    expect(r.exitCode).toBe(0);
    expect(complete(r.stdout, ['attend', 'sen'])).toEqual(['send']);
    expect(complete(r.stdout, ['attend', 'channels', ''])).toEqual(expect.arrayContaining(['create', 'describe', 'pin', 'unpin', '--joined', '--json']));
    expect(complete(r.stdout, ['attend', 'send', '--ch'])).toEqual(['--channel']);
    expect(complete(r.stdout, ['attend', 'inbox', '--limit', '5', '--j'])).toEqual(['--json']);
    expect(complete(r.stdout, ['attend', 'channels', 'create', '--'])).toEqual(['--json', '--help']);
    // A value of an option completes files (the shell's default), not commands.
    expect(complete(r.stdout, ['attend', 'send', '--to', ''])).toEqual([]);
  });

  for (const [shell, complete] of [
    ['zsh', zshComplete],
    ['fish', fishComplete],
  ] as const) {
    it(`${shell} completes commands, subcommands and a command’s own options`, () => {
      const r = runBin(['completion', shell], { env: bus.env });
      expect(r.exitCode).toBe(0);
      expect(complete(r.stdout, 'attend sen')).toEqual(['send']);
      expect(complete(r.stdout, 'attend channels ')).toEqual(expect.arrayContaining(['create', 'describe', 'pin', 'unpin']));
      expect(complete(r.stdout, 'attend relay st')).toEqual(['status']);
      expect(complete(r.stdout, 'attend send --ch')).toEqual(['--channel']);
      expect(complete(r.stdout, 'attend channels create --').sort()).toEqual(['--help', '--json']);
      expect(complete(r.stdout, 'attend inbox --limit 5 --j')).toEqual(['--json']);
      // A value of an option completes files, not commands.
      writeFileSync(join(bus.dir, 'note-for-web.txt'), 'x');
      expect(complete(r.stdout, 'attend send --to note-')).toEqual(['note-for-web.txt']);
    });
  }

  it('zsh and fish scripts name every command; an unknown shell is a usage error', () => {
    const zsh = runBin(['completion', 'zsh'], { env: bus.env });
    const fish = runBin(['completion', 'fish'], { env: bus.env });
    expect(zsh.stdout).toMatch(/^#compdef attend\n/);
    for (const cmd of ['send', 'inbox', 'relay', 'completion']) {
      expect(zsh.stdout).toContain(`'${cmd}:`);
      expect(fish.stdout).toContain(`-a '${cmd}'`);
    }
    // Both parse in their own shell (given as a file: fish -n reads no script from a pipe).
    for (const [shell, text] of [
      ['zsh', zsh.stdout],
      ['fish', fish.stdout],
    ] as const) {
      const file = join(bus.dir, `syntax.${shell}`);
      writeFileSync(file, text);
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
