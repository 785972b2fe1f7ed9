// `reply`: message and on_behalf_of (ADR-401), plus an optional `re` for a reply to a message
// other than the newest one shown to this session.

import { z } from 'zod';
import { runReply } from '../verbs/reply.js';
import { bodyArg, messageIdArg, principalArg, sendOut, urgencyArg } from './schemas.js';
import { defineTool } from './tool.js';

export const replyTool = defineTool({
  name: 'reply',
  title: 'Reply to a message',
  description:
    'Reply to the newest message shown to this session (or to the message `re` names). The reply threads under it and goes back where it came from: the channel, the sender, or #open.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  input: z.strictObject({
    message: bodyArg.describe('the reply text (at most 64 KiB)'),
    re: messageIdArg.optional().describe('the id of the message to reply to'),
    on_behalf_of: principalArg.optional().describe('the principal whose request this carries (shown as a claim)'),
    urgency: urgencyArg.optional(),
  }),
  output: sendOut,
  run: (ctx, args) => runReply(ctx, { message: args.message, re: args.re, onBehalfOf: args.on_behalf_of, urgency: args.urgency }),
});
