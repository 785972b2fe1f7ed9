// `send` (ADR-401 "#538 and typed tool parameters"): message, to?, channel?, on_behalf_of?.
// from_kind and from_id are never parameters; the server resolves them from its own ancestry.

import { z } from 'zod';
import { runSend } from '../verbs/send.js';
import { bodyArg, channelArg, principalArg, sendOut, urgencyArg } from './schemas.js';
import { defineTool } from './tool.js';

export const sendTool = defineTool({
  name: 'send',
  title: 'Send a message',
  description:
    'Send a message on the attend bus. With no `to` or `channel` it goes to #open (everyone). `to` is a list of recipients: display names (as `peers` shows them), session ids, usernames or project paths. Returns the message id.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  input: z.strictObject({
    message: bodyArg.describe('the message text (at most 64 KiB)'),
    to: z
      .array(z.string().min(1).max(256))
      .min(1)
      .max(64)
      .optional()
      .describe('a list of recipients, e.g. ["Hana", "tam"]: display names, session ids, usernames or project paths'),
    channel: channelArg.optional(),
    on_behalf_of: principalArg.optional().describe('the principal whose request this carries (shown as a claim)'),
    urgency: urgencyArg.optional(),
  }),
  output: sendOut,
  run: (ctx, args) => runSend(ctx, { message: args.message, to: args.to, channel: args.channel, onBehalfOf: args.on_behalf_of, urgency: args.urgency }),
});
