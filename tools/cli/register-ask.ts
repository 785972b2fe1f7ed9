// `attend ask` and `attend send --wait` (issue 23 §1): the verb waits (tools/verbs/ask.ts);
// here its result is printed — the reply as `attend inbox <id>` shows a message, or who was
// shown it — and a timeout is the verb's AttendError, exit 6, reported like any other.

import { Option, type Command } from 'commander';
import { readKnownNames } from '../bus/presence/index.js';
import { nameLookup } from '../wire/display.js';
import { neutralize } from '../wire/render.js';
import type { Ctx } from './context.js';
import { type Io, messageFrom } from './io.js';
import { type Registrar, examples } from './registrar.js';

/** `--wait` and `--timeout`, on `send` and `ask` alike. */
export function waitOptions(cmd: Command, ask: boolean): Command {
  const wait = new Option('--wait <what>', ask ? 'what ends the wait: reply (the default) or shown' : 'block until an addressee replies (reply) or has been shown it (shown); exit 6 at --timeout');
  return cmd.addOption(ask ? wait.default('reply') : wait).option('--timeout <duration>', 'how long to wait (90s, 5m, 1h; default 10m)');
}

interface WaitFlags {
  to?: string[];
  channel?: string;
  re?: string;
  onBehalfOf?: string;
  urgent?: boolean;
  quiet?: boolean;
  json?: boolean;
  wait: string;
  timeout?: string;
}

/** Send and wait, then print what ended the wait. */
export async function sendAndWait(ctx: Ctx, io: Io, words: string[], opts: WaitFlags): Promise<void> {
  const { DEFAULT_WAIT_MS, parseWaitDuration, parseWaitMode, runAsk } = await import('../verbs/ask.js');
  const urgency = (await import('../verbs/send.js')).urgencyOf(opts);
  const wait = parseWaitMode(opts.wait);
  const timeoutMs = opts.timeout !== undefined ? parseWaitDuration(opts.timeout) : DEFAULT_WAIT_MS;
  // What prints the answer is loaded while the wait is idle, not after the answer came.
  const printing = Promise.all([import('./format.js'), import('../verbs/inbox.js')]);
  const message = await messageFrom(ctx, words);
  // The send's notes (who it reaches, how) come first: a timeout's error follows them.
  const onSent = (sent: { notes: string[] }) => sent.notes.forEach((note) => io.err(`attend: ${note}`));
  const r = await runAsk(ctx, { message, to: opts.to, channel: opts.channel, re: opts.re, onBehalfOf: opts.onBehalfOf, urgency, wait, timeoutMs }, { onSent });
  const [{ formatBlock }, { messageJson }] = await printing;
  if (opts.json) {
    return io.json({ ...r, wait: { ...r.wait, ...(r.wait.reply ? { reply: messageJson(r.wait.reply) } : {}) } });
  }
  const shown = r.wait.shown.map((p) => `${neutralize(p.name)}${p.by !== undefined ? ` (${p.by})` : ''}`).join(', ');
  if (!r.wait.reply) return io.out(`${r.id} shown to ${shown}${r.wait.notShown.length ? `; not yet to ${r.wait.notShown.map((p) => neutralize(p.name)).join(', ')}` : ''}`);
  io.out(formatBlock(r.wait.reply, nameLookup(ctx.live(), ctx.identity().id, readKnownNames(ctx.root())), ctx.now()));
}

export const registerAsk: Registrar = (program, ctx, io) => {
  waitOptions(
    program
      .command('ask')
      .description('send a message and wait for the reply (send --wait reply); exit 6 when none comes in time')
      .argument('<to>', 'who is asked: a display name, session id, username or path')
      .argument('<message...>', "the question; '-' reads it from stdin")
      .option('--channel <name>', 'ask in a channel (its members are asked)')
      .option('--re <id>', 'thread under this message id')
      .option('--on-behalf-of <id>', 'the principal whose request this carries (a claim)')
      .option('--urgent', 'wake them now, even in focus (a question that blocks you and cannot wait)')
      .option('--quiet', 'wake nobody: shown at their next turn boundary (the wait goes on until then)')
      .option('--json', 'print JSON'),
    true,
  )
    .addHelpText('after', examples(['attend ask Hana "which port does the api use?"', 'attend ask codex-api "done with the parser?" --timeout 90s', 'attend ask Hana "merged?" --wait shown', 'attend ask --urgent codex-api "are you mid-migration? I am about to drop the table"']))
    .action((to: string, words: string[], opts: WaitFlags) => sendAndWait(ctx, io, words, { ...opts, to: [to] }));
};
