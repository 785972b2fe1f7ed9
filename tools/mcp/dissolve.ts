// `dissolve`: delete a channel and its history; its members are told.

import { z } from 'zod';
import { runDissolve } from '../verbs/channels/index.js';
import { channelArg } from './schemas.js';
import { defineTool } from './tool.js';

export const dissolveTool = defineTool({
  name: 'dissolve',
  title: 'Dissolve a channel',
  description:
    'Dissolve a channel this session is a member of: the channel and all its messages are deleted and the other members are told. Refused while other live members are in it unless force is true.',
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  input: z.strictObject({ channel: channelArg, force: z.boolean().optional().describe('dissolve even with other live members (they are told)') }),
  output: z.object({
    channel: z.string(),
    notified: z.array(z.string()),
    removedMessages: z.number().int(),
    notice: z.string().nullable(),
  }),
  run: (ctx, args) => runDissolve(ctx, { channel: args.channel, force: args.force }),
});
