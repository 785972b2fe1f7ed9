// CLI wiring for delivery: `attend run` (the sensor), `attend deliver` (the socket conduit) and the drain behind `attend inbox
// --drain` (the inbox command itself is registered in cli.ts and dispatches here).

import type { Command } from 'commander';
import type { Ctx } from './context.js';
import { type Registrar, examples } from './registrar.js';
import type { Io } from './io.js';
import { usageError } from '../wire/errors.js';
import { readHookStdin } from './hook-stdin.js';

/** `attend inbox --drain [--format hook|plain]`: always exit 0, whatever happens. */
export async function runInboxDrain(ctx: Ctx, io: Io, opts: { format?: string; trace?: boolean; json?: boolean }): Promise<void> {
  const format = opts.format ?? 'hook';
  if (format !== 'hook' && format !== 'plain') {
    // A usage error like any other. The hooks attend installs run `attend hook stop`, which
    // never exits 2 (Claude Code reads a Stop hook's exit 2 as "block"); this form is typed.
    throw usageError(`--format takes hook or plain, not '${format.slice(0, 20)}'; nothing delivered`);
  }
  // The plain format is the generic harness's verb: it has no payload and never reads stdin.
  let payload = '';
  if (format === 'hook') {
    try {
      payload = await readHookStdin(ctx.stdin);
    } catch (err) {
      io.err(`attend: cannot read the Stop hook payload: ${(err as Error).message}`);
    }
  }
  const { runDrain } = await import('./commands/drain.js');
  runDrain(ctx, { format, payload, trace: opts.trace ?? false });
  io.setExitCode(0);
}

export const registerDelivery: Registrar = (program: Command, ctx: Ctx, io: Io) => {
  program
    .command('run')
    .description('the sensor: print one line per new message, for Claude Code\'s Monitor tool')
    .option('--poll', 'poll the directories instead of native file events (network filesystems)')
    .option('--interval <ms>', 'polling interval in milliseconds', '1000')
    .option('--trace', 'name on stderr the ids each digest line stands for')
    .addHelpText(
      'after',
      `${examples(['attend run', 'attend run --poll --interval 2000'])}
Start it through Claude Code's Monitor tool (command "attend run"); re-arm it when it expires.
It resumes from the session's delivery ledger and never repeats a message. Lines:
  [attend message from_kind=agent from=<id> to=* id=<id>]
  message from <sender> (<kind>, to <addressee>): <body>
  (an urgent message: urgency=urgent in the header, "URGENT message from"; a quiet one, or
  an agent's while you are in focus, waits for the Stop hook: attend focus)
  [attend digest count=12 to_you=3 open=9 other=0 human=2 agent=10]   (more than 8 at once)
`,
    )
    .action(async (opts: { poll?: boolean; interval: string; trace?: boolean }) => {
      if (!/^\d+$/.test(opts.interval)) throw usageError(`--interval takes milliseconds, not '${opts.interval.slice(0, 20)}'`);
      const { runRun } = await import('./commands/run.js');
      const r = await runRun(ctx, { poll: opts.poll ?? false, interval: Number(opts.interval), trace: opts.trace ?? false });
      if (r.reason === 'claude-gone') io.err('attend: the Claude Code session is gone; the sensor stops');
      io.setExitCode(0);
      // The sensor has released its claim and presence; whatever handle a dependency may still
      // hold must not keep a stopped sensor alive (no orphans). Unref'd: a clean exit wins.
      setTimeout(() => process.exit(0), 2_000).unref();
    });

  program
    .command('deliver')
    .description("the socket conduit: post new messages to this Claude Code session's inbox socket (started by the SessionStart hook)")
    .option('--poll', 'poll the directories instead of native file events (network filesystems)')
    .option('--interval <ms>', 'polling interval in milliseconds', '1000')
    .addHelpText(
      'after',
      `${examples(['attend deliver'])}
For a session with no plugin monitor (an \`attend install\`ed session, a -p worker), the
SessionStart hook starts it detached. It posts each batch of new messages to
CLAUDE_CODE_MESSAGING_SOCKET inside <cross-session-message from=... from-name="<sender> via attend">,
counts a message delivered only when no held/refused/expired/dropped receipt comes back (one
that does gives the post's messages back for the Stop hook, and the deliverer stops), writes
a model's SendMessage answer to a post to the bus as the session's reply, hands the session
to \`attend run\` when one starts, and exits when the session's process is gone.
`,
    )
    .action(async (opts: { poll?: boolean; interval: string }) => {
      if (!/^\d+$/.test(opts.interval)) throw usageError(`--interval takes milliseconds, not '${opts.interval.slice(0, 20)}'`);
      const { runDeliver } = await import('./commands/deliver.js');
      await runDeliver(ctx, { poll: opts.poll ?? false, interval: Number(opts.interval) });
      io.setExitCode(0);
      setTimeout(() => process.exit(0), 2_000).unref();
    });
};
