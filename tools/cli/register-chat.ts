// CLI wiring for `attend chat`.

import type { Registrar } from './cli.js';

export const registerChat: Registrar = (program, ctx, io) => {
  program
    .command('chat')
    .description('open the operator terminal: read every scope, write as yourself (the human)')
    .option('--mouse', 'scroll with the mouse wheel (off by default so terminal selection works; /mouse toggles)')
    .addHelpText(
      'after',
      `
Keys:
  Enter send · Alt-Enter newline · ↑/↓ history · Tab complete @names #channels /commands (again: cycle)
  Tab on an empty line / Shift-Tab / Ctrl-←→ switch tabs · Alt-1..9 jump to a tab
  PgUp/PgDn scroll (End follows again) · Esc or Ctrl-C quit (asks if a draft would be lost)
  Alt-↑/↓ (or Ctrl-↑/↓) select a message (marked ▶): Enter then replies to it, and so does /reply
  (the destination line reads "reply to <sender> (<id>)"; a draft starting with @Name or #channel
  goes there instead); moving down past the newest or Esc lets go (Esc quits only with nothing selected)

Addressing:
  "@Nick can you look?"   to one live session (names match case-insensitively, typos within 2 edits)
  "#ops deploying"        to a channel;  "#ops @Tam ..." to Tam inside #ops
  no address              goes where the tab points (#open, the channel, the last direct correspondent)

Examples:
  $ attend chat
  $ attend chat --mouse
  $ ATTEND_HOME=/tmp/bus attend chat
`,
    )
    .action(async (opts: { mouse?: boolean }) => {
      const { runChat } = await import('./commands/chat.js');
      const code = await runChat(ctx, { mouse: opts.mouse ?? false });
      if (code !== 0) io.setExitCode(code);
    });
};
