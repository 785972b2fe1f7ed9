// `channels`: the channels on the bus and who is in them.

import { z } from 'zod';
import { runChannels } from '../verbs/channels/index.js';
import { READ_ONLY, defineTool } from './tool.js';

export const channelsTool = defineTool({
  name: 'channels',
  title: 'List channels',
  description: 'List channels: #open and every named channel, with description, members and whether this session joined.',
  hints: READ_ONLY,
  input: z.strictObject({
    joined: z.boolean().optional().describe('only the channels this session joined'),
  }),
  output: z.object({
    channels: z.array(
      z.object({
        name: z.string(),
        label: z.string(),
        description: z.string(),
        pinned: z.boolean(),
        joined: z.boolean(),
        members: z.array(z.object({ id: z.string(), name: z.string(), kind: z.enum(['agent', 'human']), live: z.boolean(), host: z.string().nullable() })),
        memberCount: z.number().int(),
        liveCount: z.number().int(),
        invited: z.array(z.string()),
        created: z.number().nullable(),
      }),
    ),
  }),
  run: (ctx, args) => runChannels(ctx, { joined: args.joined }),
});
