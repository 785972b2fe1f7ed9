// `join`: start receiving a channel (created when it does not exist).

import { z } from 'zod';
import { runJoin } from '../verbs/channels/index.js';
import { defineTool } from './tool.js';

export const joinTool = defineTool({
  name: 'join',
  description: 'Join a channel (#name or name); it is created if it does not exist. Messages in it are then delivered to this session.',
  readOnly: false,
  input: z.strictObject({
    channel: z.string().min(1).describe('the channel name, #name or name'),
  }),
  run: (ctx, args) => runJoin(ctx, { channel: args.channel }),
});
