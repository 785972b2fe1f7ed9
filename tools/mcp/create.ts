// `create`: a pinned channel with a description, before anyone joins it.

import { z } from 'zod';
import { runCreate } from '../verbs/channels/index.js';
import { channelArg, descriptionArg } from './schemas.js';
import { defineTool } from './tool.js';

export const createTool = defineTool({
  name: 'create',
  title: 'Create a channel',
  description: 'Create a channel with an optional one-line description. It stays (pinned) until dissolved, even while nobody is in it. Creating does not join it; use `join`.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  input: z.strictObject({ channel: channelArg, description: descriptionArg.optional() }),
  output: z.object({ channel: z.string(), description: z.string(), pinned: z.literal(true) }),
  run: (ctx, args) => runCreate(ctx, { channel: args.channel, description: args.description }),
});
