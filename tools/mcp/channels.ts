// `channels`: the channels on the bus and who is in them.

import { z } from 'zod';
import { runChannels } from '../verbs/channels/index.js';
import { defineTool } from './tool.js';

export const channelsTool = defineTool({
  name: 'channels',
  description: 'List channels: #open and every named channel, with description, members and whether this session joined.',
  readOnly: true,
  input: z.strictObject({
    joined: z.boolean().optional().describe('only the channels this session joined'),
  }),
  run: (ctx, args) => runChannels(ctx, { joined: args.joined }),
});
