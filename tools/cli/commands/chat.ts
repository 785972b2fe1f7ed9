// `attend chat`: the operator's terminal (issue #5). The command itself only checks for a
// terminal and loads the UI lazily, so Ink and React cost nothing to every other verb.

import { AttendError, EXIT } from '../../bus/errors.js';
import type { Ctx } from '../context.js';

export interface ChatInput {
  mouse: boolean;
}

export async function runChat(ctx: Ctx, input: ChatInput): Promise<number> {
  const stdinTTY = (ctx.stdin as { isTTY?: boolean }).isTTY === true;
  if (!stdinTTY || ctx.stdout.isTTY !== true) {
    throw new AttendError('attend chat needs a terminal (stdin and stdout must be a TTY)', EXIT.usage, 'read with `attend inbox`, write with `attend send`');
  }
  // Ink reads CI variables when it is first imported and, under CI, draws nothing until the
  // app exits. Chat is interactive by construction (both ends are a TTY, checked above), so
  // the detection must not apply; this process starts no children that would inherit it.
  for (const key of Object.keys(process.env)) if (key === 'CI' || key === 'CONTINUOUS_INTEGRATION' || key.startsWith('CI_')) delete process.env[key];
  const { startChat } = await import('../../chat/start-chat.js');
  return startChat(ctx, input);
}
