// One MCP tool: a zod schema for its arguments and a run over a fresh ctx. The server turns
// a schema failure into a protocol error and an AttendError into a tool error.

import type { z } from 'zod';
import type { VerbCtx } from '../verbs/context.js';

export interface McpTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  readOnly: boolean;
  run(ctx: VerbCtx, args: z.output<S>): unknown;
}

export function defineTool<S extends z.ZodObject>(tool: McpTool<S>): McpTool<S> {
  return tool;
}
