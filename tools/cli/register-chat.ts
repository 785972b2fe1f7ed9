// CLI wiring for `attend chat`.

// The keys come from the chat's key table (pure data, no imports), the same table /help and
// the key handler read.
import { keyHelpLines } from '../chat/keys.js';
import type { Registrar } from './registrar.js';

export const registerChat: Registrar = (program, ctx, io) => {
  program
    .command('chat')
    .description('open the operator terminal: read every scope, write as yourself (the human)')
    .option('--mouse', 'scroll with the mouse wheel (off by default so terminal selection works; /mouse toggles)')
    .addHelpText(
      'after',
      `
Keys:
${keyHelpLines().map((l) => `  ${l}`).join('\n')}

Addressing:
  "@Nick can you look?"   to one party, resolved as attend send --to resolves it: an exact name (any
                          case), a unique prefix of a live name, or an id (8+ characters); a party that
                          ended is left a message that waits ("waits for api (gone), last seen 2h ago");
                          a typo is never sent (the line suggests the closest known names, Tab completes),
                          and a name two parties share (a human and an agent) is ambiguous:
                          @human:<username> names the person, @host:name a party of another machine
  "#ops deploying"        to a channel;  "#ops @Tam ..." to Tam inside #ops
  no address              goes where the tab points (#open, the channel, the last direct correspondent)
  #open and channels are sent even when nobody else is live (history lasts): the destination
  line and the result say who will only see it when they come back

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
