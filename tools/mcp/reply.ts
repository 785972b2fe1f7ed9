// `reply`: message and on_behalf_of, plus an optional `re` for a reply to a message
// other than the newest one shown to this session.

import { z } from 'zod';
import { runReply } from '../verbs/reply.js';
import { defineTool } from './tool.js';

export const replyTool = defineTool({
  name: 'reply',
  description:
    'Reply to the newest message shown to this session (or to the message `re` names). The reply threads under it and goes back where it came from: the channel, the sender, or #open.',
  readOnly: false,
  input: z.strictObject({
    message: z.string().min(1).describe('the reply text'),
    re: z.string().regex(/^[A-Za-z0-9_-]+$/).optional().describe('the id of the message to reply to'),
    on_behalf_of: z.string().min(1).optional().describe('the principal whose request this carries (shown as a claim)'),
  }),
  run: (ctx, args) => runReply(ctx, { message: args.message, re: args.re, onBehalfOf: args.on_behalf_of }),
});
