// `join`: start receiving a channel (created when it does not exist).

import { z } from 'zod';
import { runJoin } from '../verbs/channels/index.js';
import { channelArg } from './schemas.js';
import { defineTool } from './tool.js';

export const joinTool = defineTool({
  name: 'join',
  title: 'Join a channel',
  description: 'Join a channel (#name or name); it is created if it does not exist. Messages in it are then delivered to this session. Joining a channel already joined changes nothing.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: z.strictObject({ channel: channelArg }),
  output: z.object({
    channel: z.string(),
    joined: z.boolean(),
    alreadyMember: z.boolean(),
    created: z.boolean(),
    pinned: z.boolean(),
    invited: z.object({ by: z.string(), owed: z.number().int(), older: z.number().int() }).nullable().describe('set when this join took up an invitation'),
  }),
  run: (ctx, args) => runJoin(ctx, { channel: args.channel }),
});
