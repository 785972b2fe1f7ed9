// `kick`: remove a member from a channel. An agent cannot kick a human.

import { z } from 'zod';
import { runKick } from '../verbs/channels/index.js';
import { channelArg, memberArg, namedParty } from './schemas.js';
import { defineTool } from './tool.js';

export const kickTool = defineTool({
  name: 'kick',
  title: 'Remove a channel member',
  description: 'Remove a member from a channel this session is in; the member is told. An agent cannot remove a human.',
  // Membership can be given back with invite; no message is lost.
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: z.strictObject({ who: memberArg, channel: channelArg }),
  output: z.object({ channel: z.string(), kicked: namedParty, notice: z.string().nullable() }),
  run: (ctx, args) => runKick(ctx, { who: args.who, channel: args.channel }),
});
