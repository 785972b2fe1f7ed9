// `whoami`: who this server writes as. Resolved from the server's own process ancestry.

import { z } from 'zod';
import { runWhoami } from '../verbs/whoami.js';
import { READ_ONLY, defineTool } from './tool.js';

export const whoamiTool = defineTool({
  name: 'whoami',
  title: 'Who am I',
  description: 'Show who attend resolves this session as: id, kind, display name, origin.',
  hints: READ_ONLY,
  input: z.strictObject({}),
  output: z.object({
    resolved: z.boolean(),
    reason: z.string(),
    kind: z.enum(['agent', 'human']),
    id: z.string(),
    sessionId: z.string().nullable(),
    from: z.string(),
    origin: z.string(),
    displayName: z.string(),
    via: z.string().nullable(),
    pid: z.number().int().nullable(),
    status: z.string().nullable(),
    followedClear: z.boolean(),
    busRoot: z.string(),
  }),
  run: (ctx) => runWhoami(ctx),
});
