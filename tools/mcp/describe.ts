// `describe`: show or set a channel's one-line description.

import { z } from 'zod';
import { runDescribe } from '../verbs/channels/index.js';
import { channelArg, descriptionArg } from './schemas.js';
import { defineTool } from './tool.js';

export const describeTool = defineTool({
  name: 'describe',
  title: 'Show or set a channel description',
  description: "Show a channel's description, or with `text`, replace it.",
  // Replacing a description loses the old one, but no message; it can be set again.
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: z.strictObject({ channel: channelArg, text: descriptionArg.optional() }),
  output: z.object({ channel: z.string(), description: z.string(), changed: z.boolean() }),
  run: (ctx, args) => runDescribe(ctx, { channel: args.channel, text: args.text }),
});
