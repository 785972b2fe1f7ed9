// The CLI's manners in a user's first hour: its grammar (unknown commands, `help <verb>`),
// help whose every example runs as written and names no internal issue, --no-color, and
// tables that fit the terminal. In-process, through the real program.

import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../tools/cli/cli.js';
import { createContext } from '../../tools/cli/context.js';
import { createIo } from '../../tools/cli/io.js';
import { textWidth } from '../../tools/wire/width.js';
import { type TempBus, runInProcess, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
const run = (args: string[], opts: { terminal?: { columns: number }; env?: Record<string, string> } = {}) => runInProcess(args, { env: opts.env ?? bus.env, ...(opts.terminal ? { terminal: opts.terminal } : {}) });

/** The program with every action replaced by nothing: what commander accepts, without running it. */
function dryProgram(): { program: Command; out: () => string } {
  let out = '';
  const sink = { write: (t: string) => (out += t) };
  const ctx = createContext({ env: {}, stdout: sink, stderr: sink });
  const program = buildProgram(ctx, createIo(ctx, () => {}));
  const walk = (c: Command) => {
    if (c !== program) c.action(() => {});
    c.commands.forEach(walk);
  };
  walk(program);
  return { program, out: () => out };
}

function allCommands(c: Command, path: string[] = []): Array<{ path: string[]; cmd: Command }> {
  return [{ path, cmd: c }, ...c.commands.flatMap((s) => allCommands(s, [...path, s.name()]))];
}

/**
 * The simple commands of one line as a POSIX shell would split them: quotes, `#` comments at a
 * word's start, and the operators | ; && || < > <( ) ending a command or taking a file.
 */
function shellCommands(line: string): string[][] {
  const cmds: string[][] = [[]];
  let word: string | null = null;
  let i = 0;
  const end = () => {
    if (word !== null) cmds[cmds.length - 1]!.push(word);
    word = null;
  };
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === "'") {
      const j = line.indexOf("'", i + 1);
      if (j < 0) throw new Error(`unbalanced ' in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, j);
      i = j + 1;
    } else if (ch === '"') {
      let j = i + 1;
      let text = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\' && j + 1 < line.length) j++;
        text += line[j];
        j++;
      }
      if (j >= line.length) throw new Error(`unbalanced " in: ${line}`);
      word = (word ?? '') + text;
      i = j + 1;
    } else if (ch === ' ' || ch === '\t') {
      end();
      i++;
    } else if (ch === '#' && word === null) {
      break;
    } else if ('|;&()<>'.includes(ch)) {
      end();
      // A redirection takes the next word as its file; anything else ends the command.
      if (ch === '<' || ch === '>') {
        const m = /^[<>]+\(?\s*/.exec(line.slice(i))!;
        if (m[0].includes('(')) cmds.push([]);
        else {
          const rest = /^\S+/.exec(line.slice(i + m[0].length))?.[0] ?? '';
          i += rest.length;
        }
        i += m[0].length;
      } else {
        cmds.push([]);
        i++;
      }
    } else {
      word = (word ?? '') + ch;
      i++;
    }
  }
  end();
  return cmds.filter((c) => c.length > 0);
}

function examplesOf(help: string): string[] {
  const at = help.indexOf('\nExamples:\n');
  if (at < 0) return [];
  const lines = help.slice(at).split('\n').slice(2);
  return lines.filter((l) => l.startsWith('  $ ')).map((l) => l.slice(4));
}

describe('the CLI’s grammar', () => {
  it('an unknown command suggests the nearest one (exit 2), not "too many arguments"', async () => {
    const r = await run(['sedn', 'hello']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe("attend: unknown command 'sedn' (Did you mean send?)\n");
    const far = await run(['xyzzy']);
    expect(far.exitCode).toBe(2);
    expect(far.stderr).toMatch(/^attend: unknown command 'xyzzy'/);
  });

  it('a mistyped subcommand of any group names it and suggests the nearest (exit 2), not "too many arguments"', async () => {
    const { program } = dryProgram();
    const groups = allCommands(program).filter(({ cmd }) => cmd !== program && cmd.commands.some((c) => c.name() !== 'help'));
    expect(groups.map((g) => g.path.join(' '))).toEqual(expect.arrayContaining(['relay', 'channels']));
    for (const { cmd, path } of groups) {
      const sub = cmd.commands.find((c) => c.name() !== 'help')?.name() ?? '';
      // Two letters swapped; where they are the same letter (`add`), the last one changed.
      const swapped = `${sub.slice(0, 1)}${sub.slice(2, 3)}${sub.slice(1, 2)}${sub.slice(3)}`;
      const typo = swapped !== sub ? swapped : `${sub.slice(0, -1)}${sub.endsWith('x') ? 'y' : 'x'}`;
      const r = await run([...path, typo]);
      expect(r.exitCode, `attend ${path.join(' ')} ${typo}`).toBe(2);
      expect(r.stderr).toBe(`attend: unknown subcommand '${typo}' for 'attend ${path.join(' ')}' (Did you mean ${sub}?)\n`);
    }
    const far = await run(['relay', 'xyzzy']);
    expect(far.exitCode).toBe(2);
    expect(far.stderr).toBe("attend: unknown subcommand 'xyzzy' for 'attend relay' (one of: config, status, resync, hub-config)\n");
  });

  it('attend help <unknown> is the unknown command with the nearest, not the whole help', async () => {
    const r = await run(['help', 'sedn']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe("attend: unknown command 'sedn' (Did you mean send?)\n");
    expect(r.stdout).toBe('');
  });

  it('attend help <verb> prints that verb’s help, like attend <verb> --help', async () => {
    const viaHelp = await run(['help', 'send']);
    const viaFlag = await run(['send', '--help']);
    expect(viaHelp.exitCode).toBe(0);
    expect(viaHelp.stdout).toMatch(/^Usage: attend send /);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    expect((await run(['help', 'channels', 'create'])).stdout).toMatch(/^Usage: attend channels create /);
  });

  it('bare attend still prints the help to stdout with exit 0', async () => {
    const r = await run([]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^Usage: attend /);
  });

  it('every example in every help parses as written (a shell would pass it the words commander accepts)', async () => {
    const { program } = dryProgram();
    const checked: string[] = [];
    for (const { path } of allCommands(program)) {
      const help = (await run([...path, '--help'])).stdout;
      for (const example of examplesOf(help)) {
        for (const words of shellCommands(example)) {
          const at = words.findIndex((w) => !/^[A-Z_]+=/.test(w));
          if (words[at] !== 'attend') continue;
          const dry = dryProgram();
          dry.program.commands.forEach((c) => c.exitOverride());
          let error = '';
          try {
            await dry.program.parseAsync(words.slice(at + 1), { from: 'user' });
          } catch (err) {
            error = (err as Error).message;
          }
          // A help example may print help; anything else commander refuses is a broken example.
          expect(error.replace(/^\(outputHelp\)$/, ''), `${example}: ${dry.out()}`).toBe('');
          checked.push(example);
        }
      }
    }
    expect(checked.length).toBeGreaterThan(60);
    expect(checked).toContain("attend purge '#ops' --json");
  });

  it('no help text names an internal issue', async () => {
    const { program } = dryProgram();
    for (const { path } of allCommands(program)) {
      const help = (await run([...path, '--help'])).stdout;
      expect(help, path.join(' ')).not.toMatch(/\bissues?\s*#?\d+|#\d+\b/i);
    }
  });

  it('--no-color is accepted in any position, before or after the verb', async () => {
    expect((await run(['--no-color', 'whoami', '--json'])).exitCode).toBe(0);
    const after = await run(['whoami', '--json', '--no-color']);
    expect(after.exitCode).toBe(0);
    expect(JSON.parse(after.stdout).id).toBeTruthy();
    // After `--` it is a word of the message, not a flag.
    expect((await run(['send', '--json', '--', '--no-color'])).exitCode).toBe(0);
  });
});

describe('tables fit the terminal', () => {
  const longBody = 'the parser now keeps comments attached to the node they precede, which the formatter relies on';

  it('attend inbox on an 80-column terminal: every row within 80 columns, ids whole, the body cut with …', async () => {
    const other = session({ name: 'reviewer-with-a-long-name' });
    for (let i = 0; i < 3; i++) expect((await run(['send', `${longBody} ${i}`], { env: other.env })).exitCode).toBe(0);
    const r = await run(['inbox'], { terminal: { columns: 80 } });
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    for (const l of lines) expect(textWidth(l), l).toBeLessThanOrEqual(80);
    const ids = JSON.parse((await run(['inbox', '--json'])).stdout).messages.map((m: { id: string }) => m.id);
    for (const id of ids) expect(r.stdout).toContain(id);
    expect(lines[1]).toMatch(/…$/);
    // COLUMNS wins over the terminal's own width, as with git and gh.
    const narrow = await run(['inbox'], { terminal: { columns: 200 }, env: { ...bus.env, COLUMNS: '72' } });
    for (const l of narrow.stdout.trimEnd().split('\n')) expect(textWidth(l), l).toBeLessThanOrEqual(72);
    // A wide terminal shows the whole body.
    expect((await run(['inbox'], { terminal: { columns: 200 } })).stdout).toContain(`${longBody} 2`);
  });

  it('attend peers and attend channels fit a 60-column terminal', async () => {
    session({ name: 'a-session-whose-name-is-long', cwd: `${bus.dir}/work/a/very/long/path/to/some/project/directory` });
    expect((await run(['channels', 'create', 'deployments-and-incidents', 'where deploys, incidents and the on-call rotation are discussed'])).exitCode).toBe(0);
    for (const args of [['peers'], ['channels']]) {
      const r = await run(args, { terminal: { columns: 60 } });
      expect(r.exitCode, args[0]).toBe(0);
      for (const l of r.stdout.trimEnd().split('\n')) expect(textWidth(l), `${args[0]}: ${l}`).toBeLessThanOrEqual(60);
    }
  });
});

describe('reply to your own message', () => {
  it('threads to the addressees of that message, not to yourself', async () => {
    const nick = session({ name: 'Nick' });
    const sent = JSON.parse((await run(['send', '--to', 'Nick', '--json', 'the schema changed'])).stdout);
    const r = await run(['reply', '--re', sent.id, '--json', 'and the migration is in']);
    expect(r.exitCode, r.stderr).toBe(0);
    const reply = JSON.parse(r.stdout);
    expect(reply.to).toBe(nick.sessionId);
    expect(reply.re).toBe(sent.id);
    expect(reply.scopes).toEqual(sent.scopes);
    // On #open, a follow-up stays on #open for everyone.
    const open = JSON.parse((await run(['send', '--json', 'deploying'])).stdout);
    expect(JSON.parse((await run(['reply', '--re', open.id, '--json', 'done'])).stdout).to).toBe('*');
  });
});
