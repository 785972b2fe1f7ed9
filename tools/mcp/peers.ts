// `peers`: who is live, by the names `send` accepts in `to`.

import { z } from 'zod';
import { runPeers } from '../verbs/peers.js';
import { READ_ONLY, defineTool } from './tool.js';

export const peersTool = defineTool({
  name: 'peers',
  title: 'List live peers',
  description:
    'List every live session and human on the bus: display name (usable in `send` `to`), id, kind, origin, status, channels, and whether anything delivers to them (deaf = messages pile up unread).',
  hints: READ_ONLY,
  input: z.strictObject({}),
  output: z.object({
    peers: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(['agent', 'human']),
        name: z.string().describe('the display name; `send` accepts it in `to`'),
        origin: z.string(),
        status: z.string().nullable().describe("Claude Code's busy/idle"),
        sessionName: z.string().nullable(),
        channels: z.array(z.string()),
        lastSeen: z.number(),
        sensor: z.number().nullable(),
        drain: z.number().nullable(),
        delivering: z.boolean(),
        deaf: z.boolean().describe('nothing delivers to it: messages pile up unread'),
        me: z.boolean(),
      }),
    ),
  }),
  run: (ctx) => runPeers(ctx),
});
