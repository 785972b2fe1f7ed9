// `leave`: stop receiving a channel.

import { z } from 'zod';
import { runLeave } from '../verbs/channels/index.js';
import { defineTool } from './tool.js';

export const leaveTool = defineTool({
  name: 'leave',
  description: 'Leave a channel this session joined.',
  readOnly: false,
  input: z.strictObject({
    channel: z.string().min(1).describe('the channel name, #name or name'),
  }),
  run: (ctx, args) => runLeave(ctx, { channel: args.channel }),
});
