// `whoami`: who this server writes as. Resolved from the server's own process ancestry.

import { z } from 'zod';
import { runWhoami } from '../verbs/whoami.js';
import { defineTool } from './tool.js';

export const whoamiTool = defineTool({
  name: 'whoami',
  description: 'Show who attend resolves this session as: id, kind, display name, origin.',
  readOnly: true,
  input: z.strictObject({}),
  run: (ctx) => runWhoami(ctx),
});
