// `peers`: who is live, by the names `send` accepts in `to`.

import { z } from 'zod';
import { runPeers } from '../verbs/peers.js';
import { defineTool } from './tool.js';

export const peersTool = defineTool({
  name: 'peers',
  description:
    'List every live session and human on the bus: display name (usable in `send` `to`), id, kind, origin, status, channels, and whether anything delivers to them (deaf = messages pile up unread).',
  readOnly: true,
  input: z.strictObject({}),
  run: (ctx) => runPeers(ctx),
});
