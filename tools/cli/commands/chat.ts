// `attend chat`: the operator's terminal (issue #5). The command itself only checks for a
// terminal and loads the UI lazily, so Ink and React cost nothing to every other verb.

import { AttendError, EXIT } from '../../wire/errors.js';
import type { Ctx } from '../context.js';

interface ChatInput {
  mouse: boolean;
}

export async function runChat(ctx: Ctx, input: ChatInput): Promise<number> {
  const stdinTTY = (ctx.stdin as { isTTY?: boolean }).isTTY === true;
  if (!stdinTTY || ctx.stdout.isTTY !== true) {
    throw new AttendError('attend chat needs a terminal (stdin and stdout must be a TTY)', EXIT.usage, 'read with `attend inbox`, write with `attend send`');
  }
  const { loadChatUi } = await import('../../chat/load.js');
  const { startChat } = await loadChatUi();
  return startChat(ctx, input);
}
