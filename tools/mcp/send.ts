// `send`, with typed parameters: message, to?, channel?, on_behalf_of?.
// from_kind and from_id are never parameters; the server resolves them from its own ancestry.

import { z } from 'zod';
import { runSend } from '../verbs/send.js';
import { defineTool } from './tool.js';

export const sendTool = defineTool({
  name: 'send',
  description:
    'Send a message on the attend bus. With no `to` or `channel` it goes to #open (everyone). `to` takes display names (as `peers` shows them), session ids, usernames or project paths. Returns the message id.',
  readOnly: false,
  input: z.strictObject({
    message: z.string().min(1).describe('the message text'),
    to: z.array(z.string().min(1)).min(1).optional().describe('recipients: display names, session ids, usernames or project paths'),
    channel: z.string().min(1).optional().describe('a channel name (#name or name)'),
    on_behalf_of: z.string().min(1).optional().describe('the principal whose request this carries (shown as a claim)'),
  }),
  run: (ctx, args) => runSend(ctx, { message: args.message, to: args.to, channel: args.channel, onBehalfOf: args.on_behalf_of }),
});
