// `leave`: stop receiving a channel.

import { z } from 'zod';
import { runLeave } from '../verbs/channels/index.js';
import { channelArg } from './schemas.js';
import { defineTool } from './tool.js';

export const leaveTool = defineTool({
  name: 'leave',
  title: 'Leave a channel',
  description: 'Leave a channel this session joined. An unpinned channel left empty is removed.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: z.strictObject({ channel: channelArg }),
  output: z.object({ channel: z.string(), left: z.boolean(), removed: z.boolean() }),
  run: (ctx, args) => runLeave(ctx, { channel: args.channel }),
});
