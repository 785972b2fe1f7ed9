// `read`: one message in full, or its whole thread.

import { z } from 'zod';
import { messageJson, runRead, runThread } from '../verbs/inbox.js';
import { defineTool } from './tool.js';

export const readTool = defineTool({
  name: 'read',
  description: 'Read one message in full by id; with thread: true, the whole thread it belongs to, oldest first.',
  readOnly: true,
  input: z.strictObject({
    id: z.string().regex(/^[A-Za-z0-9_-]+$/).describe('the message id'),
    thread: z.boolean().optional().describe('return the whole thread'),
  }),
  run: (ctx, args) => (args.thread ? { messages: runThread(ctx, args.id).map(messageJson) } : messageJson(runRead(ctx, args.id))),
});
