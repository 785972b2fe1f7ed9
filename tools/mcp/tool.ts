// One MCP tool: zod schemas for its arguments and its result, honest annotations, and a run
// over a fresh ctx. The server turns every failure (bad arguments, an AttendError, a bug)
// into a tool result with isError, so any client hands it to the model to correct
// (MCP 2025-11-25, "Error Handling"; issue #11 §3).

import type { z } from 'zod';
import type { VerbCtx } from '../verbs/context.js';

/**
 * MCP tool annotations, said truthfully (issue #11 §4):
 * - readOnlyHint: the tool changes nothing another party can see. (inbox and read remember
 *   the newest message shown, which only changes what `reply` answers by default.)
 * - destructiveHint: the tool can lose messages. Membership and settings changes can be
 *   undone with the same verbs, so only `dissolve` (which deletes a channel's history) is.
 * - idempotentHint: calling again with the same arguments has no further effect. A send
 *   writes a new message every time; a join of a channel already joined changes nothing.
 * - openWorldHint: false; everything stays on this machine's bus.
 */
interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
}

export interface McpTool<S extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  output: O;
  hints: ToolHints;
  run(ctx: VerbCtx, args: z.output<S>): z.input<O>;
  /** A tool that waits (`ask`): called instead of `run`, with progress and cancellation. */
  wait?(ctx: VerbCtx, args: z.output<S>, w: ToolWait): Promise<z.input<O>>;
}

/** What a waiting tool is handed: a progress sink (silent without a progressToken) and the request's cancellation. */
export interface ToolWait {
  progress(step: number, message: string): void;
  signal?: AbortSignal;
}

export function defineTool<S extends z.ZodObject, O extends z.ZodObject>(tool: McpTool<S, O>): McpTool<S, O> {
  return tool;
}

/** A read tool: changes nothing, so repeating it is harmless. */
export const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
