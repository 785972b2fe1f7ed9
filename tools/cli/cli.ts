// The composition root: parse with commander, run a command, format its result, map errors
// to exit codes. Every error a command throws ends here (runCli) and is reported once; the
// send and MCP fast paths (fast-send.ts, fast-mcp.ts) report theirs through the same io.ts.

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AttendError, EXIT, exitCodesLine } from '../wire/errors.js';
import { readKnownNames } from '../bus/presence/index.js';
import { type Ctx, type CtxOptions, createContext } from './context.js';
import { nameLookup } from '../wire/display.js';
import { neutralize, plural } from '../wire/render.js';
import { editDistance } from '../wire/names.js';
import { type Io, createIo, messageFrom, printSent, reportError, terminalWidth } from './io.js';
import { type Registrar, examples } from './registrar.js';
import { registerDelivery } from './register-delivery.js';
import { VERSION } from './version.js';
import { whoamiText } from './whoami-text.js';
import { registerChannels } from './register-channels.js';
import { registerChat } from './register-chat.js';
import { registerWeb } from './register-web.js';
import { registerIntegration } from './register-integration.js';
import { registerTrust } from './register-trust.js';
import { registerRelay } from './register-relay.js';
import { registerAdapters } from './register-adapters.js';
import { registerClaims } from './register-claims.js';
import { registerSearch } from './register-search.js';
import { registerAsk, sendAndWait, waitOptions } from './register-ask.js';

interface CliResult {
  exitCode: number;
}


function collect(value: string, prev: string[] = []): string[] {
  return [...prev, value];
}

/** A flag that takes one value: given twice is a mistake, not "the last one wins". */
function once(flag: string) {
  return (value: string, prev: string | undefined): string => {
    if (prev !== undefined) throw new InvalidArgumentError(`${flag} is given twice ('${prev.slice(0, 40)}', '${value.slice(0, 40)}'); give it once`);
    return value;
  };
}

type SendOpts = { to?: string[]; channel?: string; re?: string; onBehalfOf?: string; urgent?: boolean; quiet?: boolean; json?: boolean; wait?: string; timeout?: string };

const registerCore: Registrar = (program, ctx, io) => {
  program
    .command('whoami')
    .description('show who attend resolves this process as')
    .option('--json', 'print JSON')
    .option('--card', 'print this node as an A2A AgentCard (JSON), signed with its key')
    .addHelpText('after', examples(['attend whoami', 'attend whoami --json', 'attend whoami --card', 'attend whoami --card | attend card verify -']))
    .action(async (opts: { json?: boolean; card?: boolean }) => {
      if (opts.card) return (await import('./register-trust.js')).printWhoamiCard(ctx, io);
      const { runWhoami } = await import('../verbs/whoami.js');
      const r = runWhoami(ctx);
      if (opts.json) return io.json(r);
      io.out(whoamiText(r));
    });

  const routing = (cmd: Command) =>
    cmd
      .addOption(new Option('--to <target>', 'a path, session id, display name, username or human:<user> (repeatable)').argParser(collect))
      .addOption(new Option('--channel <name>', 'send to a channel (#name or name)').argParser(once('--channel')))
      .option('--on-behalf-of <id>', 'the principal whose request this carries (a claim)')
      .option('--urgent', 'wake every recipient now, even one in focus (for what cannot wait)')
      .option('--quiet', 'wake nobody: shown at each recipient\'s next turn boundary (an FYI)')
      .option('--json', 'print JSON');

  routing(
    waitOptions(
      program
        .command('send')
        .description('send a message (default: to #open)')
        .argument('<message...>', "the message; '-' reads it from stdin")
        .option('--re <id>', 'thread under this message id'),
      false,
    ),
  )
    .addHelpText(
      'after',
      examples([
        'attend send "build is green"',
        'attend send --to codex-api "can you take the parser?"',
        'attend send --to /home/dev/api --to aaron "schema changed"',
        'attend send --channel ops "deploying"',
        'attend send --urgent --to codex-api "stop: main is broken, do not pull"',
        'attend send --quiet "FYI: docs regenerated"',
        'attend send -- --this starts with dashes',
        'git log -1 | attend send -',
        'attend send --to Hana "ready for review" --wait shown',
      ]),
    )
    .action(async (words: string[], opts: SendOpts) => {
      if (opts.wait !== undefined) return sendAndWait(ctx, io, words, { ...opts, wait: opts.wait });
      if (opts.timeout !== undefined) throw new AttendError('--timeout goes with --wait (attend send --wait reply --timeout 5m)', EXIT.usage);
      const { runSend, urgencyOf } = await import('../verbs/send.js');
      const urgency = urgencyOf(opts);
      const message = await messageFrom(ctx, words);
      const r = runSend(ctx, { message, to: opts.to, channel: opts.channel, re: opts.re, onBehalfOf: opts.onBehalfOf, urgency });
      printSent(io, r, opts.json);
    });

  routing(
    program
      .command('reply')
      .description('reply to the newest message shown to you (or --re <id>)')
      .argument('<message...>', "the reply; '-' reads it from stdin")
      .option('--re <id>', 'the message to reply to'),
  )
    .addHelpText('after', examples(['attend reply "on it"', 'attend reply --re 0mhx1y2z3000-1a2b3c4d "done"']))
    .action(async (words: string[], opts: SendOpts) => {
      const { runReply } = await import('../verbs/reply.js');
      const urgency = (await import('../verbs/send.js')).urgencyOf(opts);
      const message = await messageFrom(ctx, words);
      const r = runReply(ctx, { message, to: opts.to, channel: opts.channel, re: opts.re, onBehalfOf: opts.onBehalfOf, urgency });
      printSent(io, r, opts.json);
    });

  program
    .command('focus')
    .description('be in focus for a while: only urgent messages and people wake you; the rest wait for your turn boundary')
    .option('--for <length>', 'how long: 45m, 2h (at most 12h)')
    .option('--off', 'end the focus')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend focus --for 45m', 'attend focus --off', 'attend focus            # in focus now?']))
    .action(async (opts: { for?: string; off?: boolean; json?: boolean }) => {
      const { runFocus } = await import('../verbs/focus.js');
      const { clockTime } = await import('../wire/attention.js');
      const r = runFocus(ctx, { for: opts.for, off: opts.off });
      if (opts.json) return io.json(r);
      if (r.focus) io.out(`in focus until ${clockTime(r.focus.until)}: only urgent messages and people wake you; the rest wait for your turn boundary`);
      else io.out(r.ended ? 'focus ended: every message wakes you again' : 'not in focus');
    });

  program
    .command('inbox')
    .description('list the messages you receive, newest first (a person: also the mail for you in every project\'s tray, from any directory); reading never marks')
    .argument('[id]', 'show one message in full')
    .option('--thread <id>', 'show the thread a message belongs to')
    .option('--limit <n>', 'messages per page', '20')
    .option('--page <n>', 'page number, 1 is newest', '1')
    .option('--before <id>', 'only messages older than this id')
    .option('--json', 'print JSON')
    .option('--sent', 'the messages you sent, newest first, with who has been shown each (from their delivery ledgers)')
    .option('--held', 'the bus owner only: messages held back (bad signature, refused by policy) in every directory, with the reason')
    .option('--drain', 'the Stop hook: deliver what the sensor has not, then record it (reads the hook JSON on stdin)')
    .option('--format <format>', 'with --drain: hook (JSON for Claude Code, the default) or plain')
    .option('--trace', 'with --drain: name on stderr the ids delivered, collapsed or left to attend inbox')
    .addHelpText('after', examples(['attend inbox', 'attend inbox --limit 50 --page 2', 'attend inbox 0mhx1y2z3000-1a2b3c4d', 'attend inbox --thread 0mhx1y2z3000-1a2b3c4d', 'attend inbox --json | jq .messages[0].body', 'attend inbox --sent                                # who has been shown what you sent', 'attend inbox --held                                # (the bus owner) what was held back, and why', 'attend inbox --drain --format plain < /dev/null    # what the Stop hook would deliver']))
    .action(async (id: string | undefined, opts: { thread?: string; limit: string; page: string; before?: string; json?: boolean; sent?: boolean; held?: boolean; drain?: boolean; format?: string; trace?: boolean }) => {
      if (opts.drain) return (await import('./register-delivery.js')).runInboxDrain(ctx, io, opts);
      if (opts.format !== undefined) throw new AttendError('--format goes with --drain (attend inbox --drain --format plain)', EXIT.usage);
      if (opts.trace) throw new AttendError('--trace goes with --drain', EXIT.usage);
      const { formatBlock, formatTable } = await import('./format.js');
      if (opts.sent) {
        const { runSent } = await import('../verbs/delivery.js');
        const { messageJson } = await import('../verbs/inbox.js');
        const r = runSent(ctx, { limit: parseIntArg(opts.limit, '--limit') });
        if (opts.json) return io.json({ messages: r.messages.map((row) => ({ ...messageJson(row.message), recipients: row.recipients })) });
        if (r.messages.length === 0) return io.out('You have sent nothing on this bus.');
        const now = ctx.now();
        const names = nameLookup(ctx.live(), ctx.identity().id, readKnownNames(ctx.root()));
        return io.out(
          r.messages
            .map((row) => {
              const shown = row.recipients.filter((x) => x.shown).map((x) => neutralize(x.name));
              const not = row.recipients.filter((x) => !x.shown).map((x) => neutralize(x.name));
              return `${formatBlock(row.message, names, now)}\n  shown to: ${shown.length ? shown.join(', ') : 'nobody yet'}${not.length ? `; not yet: ${not.join(', ')}` : ''}`;
            })
            .join('\n\n'),
        );
      }
      const inbox = await import('../verbs/inbox.js');
      const names = nameLookup(ctx.live(), ctx.identity().id, readKnownNames(ctx.root()));
      const now = ctx.now();
      if (id !== undefined || opts.thread !== undefined) {
        const msgs = id !== undefined ? [inbox.runRead(ctx, id)] : inbox.runThread(ctx, opts.thread as string);
        if (opts.json) return io.json(id !== undefined ? inbox.messageJson(msgs[0]!) : { messages: msgs.map(inbox.messageJson) });
        return io.out(msgs.map((m) => formatBlock(m, names, now)).join('\n\n'));
      }
      const page = inbox.runInbox(ctx, { limit: parseIntArg(opts.limit, '--limit'), page: parseIntArg(opts.page, '--page'), before: opts.before, held: opts.held });
      // A directory that could not be read is not "no messages" (issue #10 item 6): the
      // reporter named it on stderr; the listing says it is incomplete and exits 3.
      const unreadable = page.unreadable ?? [];
      if (unreadable.length > 0) io.setExitCode(EXIT.bus);
      if (opts.json) return io.json({ ...page, messages: page.messages.map(inbox.messageJson) });
      const missing = unreadable.length === 0 ? '' : `${plural(unreadable.length, 'directory', 'directories')} could not be read (see above)`;
      const none = opts.held ? 'No held messages.' : 'No messages.';
      // Past the cap of verifications one listing makes: not shown, verified by a later one.
      if (page.unchecked !== undefined) io.err(`attend: ${plural(page.unchecked, 'message')} not verified yet, so not shown (a later listing verifies them)`);
      if (page.messages.length === 0) return io.out(page.total === 0 ? (missing ? `No messages could be read: ${missing}.` : none) : `No messages on page ${page.page} (${plural(page.pages, 'page')}).`);
      if (missing) io.err(`attend: this listing is incomplete: ${missing}`);
      const footer = page.pages > 1 ? `\npage ${page.page} of ${page.pages} (${plural(page.total, 'message')}); --page ${Math.min(page.page + 1, page.pages)} for older` : '';
      if (ctx.stdout.isTTY) return io.out(formatTable(page.messages, names, now, terminalWidth(ctx.stdout, ctx.env)) + footer);
      io.out(page.messages.map((m) => formatBlock(m, names, now)).join('\n\n') + footer);
    });

  program
    .command('completion')
    .description('print a completion script for bash, zsh or fish (commands, subcommands, options)')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      examples([
        'source <(attend completion bash)                                  # in ~/.bashrc',
        'source <(attend completion zsh)                                   # in ~/.zshrc, after compinit',
        'attend completion fish > ~/.config/fish/completions/attend.fish',
      ]),
    )
    .action(async (shell: string) => {
      const { SHELLS, completionScript } = await import('./completion.js');
      const known = SHELLS.find((s) => s === shell);
      if (!known) throw new AttendError(`no completion for the shell '${shell.slice(0, 20)}': give bash, zsh or fish`, EXIT.usage);
      ctx.stdout.write(completionScript(program, known));
    });

  program
    .command('demo')
    .description('a self-contained walkthrough on a temporary bus')
    .option('--keep', 'keep the temporary bus and print where it is')
    .addHelpText('after', examples(['attend demo']))
    .action(async (opts: { keep?: boolean }) => {
      const { runDemo } = await import('./commands/demo.js');
      await runDemo(ctx, io, { keep: opts.keep ?? false });
    });
};

function parseIntArg(value: string, flag: string): number {
  if (!/^\d+$/.test(value)) throw new AttendError(`${flag} takes a whole number, not '${value.slice(0, 20)}'`, EXIT.usage);
  return Number(value);
}

/** Extra command groups register here (channels, delivery, chat, integration). */
const registrars: Registrar[] = [registerCore, registerAsk, registerChannels, registerDelivery, registerChat, registerWeb, registerIntegration, registerTrust, registerRelay, registerAdapters, registerClaims, registerSearch];

/**
 * `--no-color` anywhere before `--` is the same as NO_COLOR=1 (https://no-color.org) for
 * whatever this run draws; taken out here so every command accepts it in any position.
 */
function takeNoColor(argv: string[], opts: CtxOptions): [string[], CtxOptions] {
  const end = argv.indexOf('--');
  const head = end < 0 ? argv : argv.slice(0, end);
  if (!head.includes('--no-color')) return [argv, opts];
  const rest = [...head.filter((a) => a !== '--no-color'), ...(end < 0 ? [] : argv.slice(end))];
  return [rest, { ...opts, env: { ...(opts.env ?? process.env), NO_COLOR: '1' } }];
}

const HELP_WIDTH = 80;

/** The commander program with every command registered; also what completion and the man page read. */
export function buildProgram(ctx: Ctx, io: Io): Command {
  const program = new Command('attend');
  program
    .description('a filesystem message bus for Claude Code sessions, other agents and their humans')
    .version(VERSION, '-V, --version')
    .option('--no-color', 'no colour in anything drawn (the same as NO_COLOR=1); any position')
    // `channels --json` and `channels create --json` are each their own command's flag.
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
      // Help wraps at 80 columns, or the terminal's width when narrower: prose past 80 is
      // harder to read, and one width lets the first commands print help built ahead
      // (postbuild.mjs, attend.cts) that is the same text this prints.
      getOutHelpWidth: () => Math.min(HELP_WIDTH, terminalWidth(ctx.stdout, ctx.env) ?? HELP_WIDTH),
      getErrHelpWidth: () => Math.min(HELP_WIDTH, terminalWidth(ctx.stderr, ctx.env) ?? HELP_WIDTH),
      // commander's "error: ...\n(Did you mean ...?)" becomes one `attend:` line.
      outputError: (s, write) => write(`attend: ${s.replace(/^error: /, '').trim().replace(/\s*\n\s*/g, ' ')}\n`),
    })
    .addHelpText('after', `\nExit codes: ${exitCodesLine()}.\nDocs: docs/reference.md, man attend; completion: attend completion <bash|zsh|fish>\n`);
  for (const register of registrars) register(program, ctx, io);
  for (const cmd of program.commands) {
    cmd.exitOverride().showSuggestionAfterError(true);
    // Subcommands do not inherit the parent's output settings once registered.
    cmd.configureOutput(program.configureOutput());
  }
  for (const cmd of commandTree(program)) refuseUnknownSubcommands(cmd);
  return program;
}

function commandTree(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(commandTree)];
}

/**
 * A group that is a command of its own too (`attend relay`, `attend channels`) takes no
 * arguments, so commander reads `attend relay sttus` as one too many ("too many arguments")
 * rather than as a subcommand it lacks; a group that is only a group (`attend card`) says
 * "unknown command" without saying whose. Each answers as the top level does for `attend
 * sedn`: the unknown subcommand, whose it is, and the nearest.
 */
function refuseUnknownSubcommands(cmd: Command): void {
  if (cmd.commands.length === 0 || cmd.registeredArguments.length > 0 || cmd.parent === null) return;
  const refuse = (word: string | undefined): void => {
    if (word === undefined) return;
    const names = cmd.commands.map((c) => c.name()).filter((n) => n !== 'help');
    const near = nearestWord(word, names);
    cmd.error(`error: unknown subcommand '${neutralize(word.slice(0, 40))}' for '${fullName(cmd)}'${near ? ` (Did you mean ${near}?)` : ` (one of: ${names.join(', ')})`}`, {
      code: 'commander.unknownCommand',
      exitCode: EXIT.usage,
    });
  };
  // With an action of its own (commander runs it, with the word as an argument) ...
  cmd.allowExcessArguments(true).hook('preAction', (_hooked, action) => refuse(action === cmd ? cmd.args[0] : undefined));
  // ... and without one (commander's event for an operand no subcommand takes).
  cmd.on('command:*', (operands: string[]) => refuse(operands[0]));
}

function fullName(cmd: Command): string {
  return cmd.parent === null ? cmd.name() : `${fullName(cmd.parent)} ${cmd.name()}`;
}

/** The nearest of `names` to a mistyped word: edit distance 2 at most, or the one it begins. */
function nearestWord(word: string, names: string[]): string | undefined {
  const w = word.toLowerCase();
  const scored = names.map((n) => ({ n, d: n.startsWith(w) && w.length >= 2 ? 1 : editDistance(w, n, 2) })).filter((x) => x.d <= 2);
  return scored.sort((a, b) => a.d - b.d || a.n.localeCompare(b.n))[0]?.n;
}

export async function runCli(argvIn: string[], optsIn: CtxOptions = {}): Promise<CliResult> {
  const [given, opts] = takeNoColor(argvIn, optsIn);
  const ctx = createContext(opts);
  let exitCode: number = EXIT.ok;
  const io: Io = createIo(ctx, (c) => {
    exitCode = c;
  });
  const program = buildProgram(ctx, io);
  // `attend help channels create` is `attend channels create --help` (commander's own help
  // command looks one word deep); `attend help sedn` is `attend sedn`, an unknown command with
  // the nearest, not the whole help.
  const helpFor = given[0] === 'help' && given.length > 1 ? given.slice(1) : undefined;
  const known = helpFor !== undefined && program.commands.some((c) => c.name() === helpFor[0] || c.aliases().includes(helpFor[0] ?? ''));
  const argv = helpFor === undefined ? given : known ? [...helpFor, '--help'] : helpFor;
  // Bare `attend`: the help is the result asked for, so it goes to stdout with exit 0. Not a
  // program action: with one, commander takes `attend sedn` for an argument of it ("too many
  // arguments") and has no `help <command>`.
  if (argv.length === 0) {
    program.outputHelp();
    return { exitCode };
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return { exitCode };
  } catch (err) {
    return { exitCode: handleError(err, io) };
  }
}

function handleError(err: unknown, io: Io): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
    // commander already printed its one-line error.
    return EXIT.usage;
  }
  return reportError(err, io);
}
