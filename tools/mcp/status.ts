// `status`: the bus root, message counts per scope, this session's inbox and what delivers to it.

import { z } from 'zod';
import { runStatus } from '../verbs/status.js';
import { READ_ONLY, defineTool } from './tool.js';

export const statusTool = defineTool({
  name: 'status',
  title: 'Bus status',
  description: "Show the bus: its root, messages per scope, this session's inbox (total and unread), joined channels and what delivers to it.",
  hints: READ_ONLY,
  input: z.strictObject({}),
  output: z.object({
    busRoot: z.string(),
    me: z.object({ id: z.string(), kind: z.enum(['agent', 'human']), name: z.string(), origin: z.string(), resolved: z.boolean() }),
    scopes: z.array(z.object({ scope: z.string(), dir: z.string(), messages: z.number().int(), mine: z.boolean() })),
    inbox: z.object({ total: z.number().int(), unread: z.number().int() }),
    channels: z.array(z.string()),
    presence: z.object({ sensor: z.number().nullable(), drain: z.number().nullable(), chat: z.number().nullable(), delivering: z.boolean() }),
    delivery: z.object({
      sensorRunning: z.boolean(),
      sensorPid: z.number().int().nullable(),
      ledger: z.object({
        state: z.enum(['missing', 'ok', 'corrupt']),
        updated: z.number().optional(),
        watermarks: z.number().int().optional(),
        consumedAbove: z.number().int().optional(),
        drainRounds: z.number().int().optional(),
        taught: z.boolean().optional(),
      }),
    }),
  }),
  run: (ctx) => runStatus(ctx),
});
