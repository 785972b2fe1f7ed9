// `read`: one message in full; with thread, also the thread it belongs to.

import { z } from 'zod';
import { runRead, runThread } from '../verbs/inbox.js';
import { messageIdArg, messageJson, messageOut } from './schemas.js';
import { READ_ONLY, defineTool } from './tool.js';

export const readTool = defineTool({
  name: 'read',
  title: 'Read a message',
  description: 'Read one message in full by id (as `inbox` lists them); with thread: true, also the whole thread it belongs to, oldest first.',
  hints: READ_ONLY,
  input: z.strictObject({
    id: messageIdArg.describe('the message id'),
    thread: z.boolean().optional().describe('also return the whole thread'),
  }),
  output: z.object({ message: messageOut, thread: z.array(messageOut).optional() }),
  run: (ctx, args) => {
    if (!args.thread) return { message: messageJson(runRead(ctx, args.id)) };
    const thread = runThread(ctx, args.id).map(messageJson);
    const message = thread.find((m) => m.id === args.id) ?? messageJson(runRead(ctx, args.id));
    return { message, thread };
  },
});
