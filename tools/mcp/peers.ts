// `peers`: who is live, by the names `send` accepts in `to`.

import { z } from 'zod';
import { runPeers } from '../verbs/peers.js';
import { reachOut } from './schemas.js';
import { READ_ONLY, defineTool } from './tool.js';

export const peersTool = defineTool({
  name: 'peers',
  title: 'List live peers',
  description:
    'List every live session and human on the bus: display name (usable in `send` `to`), id, kind, origin, status, channels, the files each claims (`holds`), and how a message reaches each: `reach.word` is shown (by a live conduit, `reach.by`), next-turn (its Stop hook at its next turn), waiting (no conduit live; `reach.since` is when it was last seen) or held (`reach.by` holds it).',
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
        delivering: z.boolean().describe('shown now or at its next turn'),
        reach: reachOut,
        me: z.boolean(),
        holds: z.array(z.string()).describe('the files it claims: paths or globs from its work tree root'),
        focusUntil: z.number().nullable().describe('in focus until (ms since the epoch): only urgent messages and people wake it; others are told'),
      }),
    ),
  }),
  run: (ctx) => runPeers(ctx),
});
