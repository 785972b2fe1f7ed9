// The attend MCP server (issue #6 §3, issue #11 §3-§6). Built on the SDK's low-level Server
// with our own tools/call handler: every failure a model can correct — arguments that do not
// fit the schema, an empty or oversized message, an unknown tool, `arguments: null`, anything
// the bus refuses — is a tool result with isError and one clear line, as the protocol
// revision this server negotiates (2025-11-25) asks. A JSON-RPC error would reach the client,
// not the model.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, GetTaskPayloadRequestSchema, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AttendError, REPORT_URL_HINT } from '../wire/errors.js';
import { printable } from '../wire/names.js';
import type { VerbCtx } from '../verbs/context.js';
import { askTool } from './ask.js';
import { channelsTool } from './channels.js';
import { claimTool, claimsTool, releaseTool } from './claims.js';
import { createTool } from './create.js';
import { describeTool } from './describe.js';
import { dissolveTool } from './dissolve.js';
import { focusTool } from './focus.js';
import { inboxTool } from './inbox.js';
import { inviteTool } from './invite.js';
import { joinTool } from './join.js';
import { kickTool } from './kick.js';
import { leaveTool } from './leave.js';
import { peersTool } from './peers.js';
import { readTool } from './read.js';
import { replyTool } from './reply.js';
import { searchTool } from './search.js';
import { sendTool } from './send.js';
import { statusTool } from './status.js';
import { serverIdentity } from './info.js';
import { hintForMcp } from './hints.js';
import { type ModernLayer, createModernLayer } from './modern.js';
import { BoundedTaskStore, taskParams, taskResult } from './tasks.js';
import type { McpTool, ToolWait } from './tool.js';
import { whoamiTool } from './whoami.js';

interface McpDeps {
  /**
   * A fresh ctx per call: identity and the live roster are read once per ctx, and a server
   * outlives both (a /clear changes the session id; peers come and go).
   */
  makeCtx(): VerbCtx;
  version: string;
  /** Extra tools registered by other parts. */
  tools?: McpTool[];
  /** Declare `experimental['claude/channel']`: this server pushes inbound messages. */
  channel?: boolean;
}

const CORE_TOOLS: McpTool[] = [
  sendTool,
  replyTool,
  inboxTool,
  readTool,
  peersTool,
  focusTool,
  whoamiTool,
  statusTool,
  channelsTool,
  joinTool,
  leaveTool,
  createTool,
  describeTool,
  inviteTool,
  kickTool,
  dissolveTool,
  claimTool,
  releaseTool,
  claimsTool,
  searchTool,
  askTool,
] as unknown as McpTool[];

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function describeIssues(err: z.ZodError): string {
  return err.issues
    .map((i) => {
      const where = i.path.length > 0 ? i.path.join('.') : 'arguments';
      // An unknown key names itself; say which keys are accepted instead of a bare "unrecognized".
      if (i.code === 'unrecognized_keys') return `${where}: unknown ${i.keys.length === 1 ? 'argument' : 'arguments'} ${i.keys.map((k) => `'${printable(k)}'`).join(', ')}`;
      if (i.code === 'invalid_type' && /received undefined$/.test(i.message)) return `${where}: required (${i.expected})`;
      return `${where}: ${i.message}`;
    })
    .join('; ');
}

function listEntry(t: McpTool): Tool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: 'input' }) as Tool['inputSchema'],
    outputSchema: z.toJSONSchema(t.output, { io: 'output' }) as NonNullable<Tool['outputSchema']>,
    annotations: { title: t.title, ...t.hints, openWorldHint: false },
    // A tool that waits may be called as a task (tasks.ts); every other answers in the call.
    ...(t.wait ? { execution: { taskSupport: 'optional' as const } } : {}),
  };
}

/** The `tools/list` result. postbuild writes it for CORE_TOOLS to dist/tools/mcp/tools-list.json. */
export function listToolsResult(tools: McpTool[] = CORE_TOOLS): { tools: Tool[] } {
  return { tools: tools.map(listEntry) };
}

/** What a call can be handed by its transport: how to notify the client, and the request's cancellation. */
export interface CallExtra {
  notify(n: { method: string; params: Record<string, unknown> }): void;
  signal?: AbortSignal;
}

/** The progress sink of a waiting tool: notifications only when the request asked for them. */
function toolWait(params: unknown, extra: CallExtra | undefined): ToolWait {
  const meta = (params as { _meta?: { progressToken?: unknown } } | undefined)?._meta;
  const token = meta?.progressToken;
  const asked = extra !== undefined && (typeof token === 'string' || typeof token === 'number');
  return {
    progress: (progress, message) => {
      if (asked) extra.notify({ method: 'notifications/progress', params: { progressToken: token, progress, message } });
    },
    ...(extra?.signal ? { signal: extra.signal } : {}),
  };
}

/** One tools/call of a tool that answers at once (a waiting one is refused: see dispatchTool). */
export function callTool(tools: Map<string, McpTool>, makeCtx: () => VerbCtx, params: unknown): CallToolResult {
  const name = (params as { name?: unknown } | null | undefined)?.name;
  if (typeof name === 'string' && tools.get(name)?.wait) return toolError(`attend: ${printable(name)} waits for an answer, and this caller cannot wait`);
  return dispatchTool(tools, makeCtx, params) as CallToolResult;
}

/**
 * One tools/call, from the raw params (nothing about them is trusted). A tool that waits
 * (`ask`) answers with a promise; every other tool answers at once.
 */
export function dispatchTool(tools: Map<string, McpTool>, makeCtx: () => VerbCtx, params: unknown, extra?: CallExtra): CallToolResult | Promise<CallToolResult> {
  const p = (typeof params === 'object' && params !== null ? params : {}) as { name?: unknown; arguments?: unknown };
  const names = [...tools.keys()].join(', ');
  if (typeof p.name !== 'string') return toolError(`attend: tools/call needs a tool name; tools: ${names}`);
  const tool = tools.get(p.name);
  if (!tool) return toolError(`attend: unknown tool '${printable(p.name)}'; tools: ${names}`);
  const raw = p.arguments ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return toolError(`attend: invalid arguments for ${tool.name}: arguments must be an object of named arguments, not ${Array.isArray(raw) ? 'an array' : typeof raw}`);
  }
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) return toolError(`attend: invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`);
  const done = (out: unknown): CallToolResult => {
    const result = tool.output.parse(out) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result };
  };
  if (tool.wait) {
    const fail = (err: unknown) => toolFailure(err, tool, tools);
    try {
      return tool.wait(makeCtx(), parsed.data, toolWait(params, extra)).then(done).catch(fail);
    } catch (err) {
      return fail(err);
    }
  }
  try {
    return done(tool.run(makeCtx(), parsed.data));
  } catch (err) {
    return toolFailure(err, tool, tools);
  }
}

/** A failure as a tool result the model can act on: an AttendError's line and hint, a bus failure, or a bug. */
function toolFailure(err: unknown, tool: McpTool, tools: Map<string, McpTool>): CallToolResult {
  if (err instanceof AttendError) return toolError(`attend: ${err.message}${err.hint ? ` (${hintForMcp(err.hint, new Set(tools.keys()))})` : ''}`);
  // A system call that failed is the bus being unusable; anything else is a bug (issue #9 §5).
  const sys = err as NodeJS.ErrnoException | undefined;
  const what = `${sys?.message ?? String(err)}`.replace(/\s*[\r\n]+\s*/g, ' ');
  if (typeof sys?.code === 'string' && /^E[A-Z0-9]+$/.test(sys.code) && typeof sys.syscall === 'string') return toolError(`attend: ${what}`);
  return toolError(`attend: internal error in ${tool.name}: ${what}; ${REPORT_URL_HINT}`);
}

// tools/call with the params left raw. The SDK's Server validates the request against its own
// schema before our handler runs, and turns `arguments: null` into -32603 with a schema dump;
// registering through Protocol keeps the request as sent, and callTool checks every field.
const RawCallToolRequest = z.object({ method: z.literal('tools/call'), params: z.unknown().optional() });

function toolsOf(deps: McpDeps): { tools: McpTool[]; byName: Map<string, McpTool> } {
  const tools = [...CORE_TOOLS, ...(deps.tools ?? [])];
  return { tools, byName: new Map(tools.map((t) => [t.name, t])) };
}

export function createServer(deps: McpDeps): Server & { closeTasks(): void } {
  const { tools, byName } = toolsOf(deps);
  const id = serverIdentity({ version: deps.version, channel: deps.channel });
  const taskStore = new BoundedTaskStore();
  const server = new Server(id.serverInfo, { capabilities: id.capabilities, instructions: id.instructions, taskStore }) as Server & { closeTasks(): void };
  // Each working task's wait, to end it on tasks/cancel or when the server closes.
  const running = new Map<string, AbortController>();
  server.closeTasks = () => {
    for (const a of running.values()) a.abort();
    running.clear();
    taskStore.close();
  };
  let listed: { tools: Tool[] } | undefined;
  server.setRequestHandler(ListToolsRequestSchema, () => (listed ??= listToolsResult(tools)));
  // The SDK serves tasks/get, tasks/list and tasks/cancel over the store; tasks/result is
  // ours, woken by the store instead of re-reading it every pollInterval.
  server.setRequestHandler(GetTaskPayloadRequestSchema, (req, extra) => taskResult(taskStore, req.params.taskId, extra.signal) as never);
  type Extra = { signal: AbortSignal; sendNotification(n: { method: string; params: Record<string, unknown> }): Promise<void> };
  const setRaw = Protocol.prototype.setRequestHandler as (this: Server, schema: unknown, handler: (req: { params?: unknown }, extra: Extra) => unknown) => void;
  setRaw.call(server, RawCallToolRequest, async (req, extra) => {
    const notify = (n: { method: string; params: Record<string, unknown> }) => void extra.sendNotification(n).catch(() => {});
    const task = taskParams(req.params);
    if (!task) return dispatchTool(byName, deps.makeCtx, req.params, { notify, signal: extra.signal });
    // Task-augmented (MCP 2025-11-25): only a tool that declares taskSupport takes it.
    const name = (req.params as { name?: unknown }).name;
    const tool = typeof name === 'string' ? byName.get(name) : undefined;
    if (!tool?.wait) throw new McpError(ErrorCode.MethodNotFound, `attend: ${typeof name === 'string' ? `'${printable(name)}'` : 'a tool call without a name'} cannot run as a task; call it without "task"`);
    const created = await taskStore.createTask({ ...(task.ttl !== undefined ? { ttl: task.ttl } : {}) });
    const taskId = created.taskId;
    const stop = new AbortController();
    running.set(taskId, stop);
    // tasks/cancel (the SDK sets the status) ends the wait; the message stays sent.
    const off = taskStore.onChange(taskId, () => {
      const t = taskStore.peek(taskId);
      if (!t || t.status === 'cancelled') stop.abort();
    });
    void Promise.resolve(dispatchTool(byName, deps.makeCtx, req.params, { notify, signal: stop.signal }))
      .then((result) => taskStore.storeTaskResult(taskId, result.isError ? 'failed' : 'completed', result))
      .then(() => {
        const t = taskStore.peek(taskId);
        if (t) void server.notification({ method: 'notifications/tasks/status', params: { ...t } }).catch(() => {});
      })
      .catch(() => {})
      .finally(() => {
        off();
        running.delete(taskId);
      });
    return { task: created };
  });
  return server;
}

/**
 * The stateless revision (modern.ts) over the same tools: it lists and calls them through
 * listToolsResult and callTool, as the SDK Server above does.
 */
export function createModern(deps: McpDeps, io: { send(m: Record<string, unknown>): void; warn(line: string): void; intervalMs?: number | undefined }): ModernLayer {
  const { tools, byName } = toolsOf(deps);
  let listed: { tools: Tool[] } | undefined;
  return createModernLayer({
    identity: serverIdentity({ version: deps.version, channel: deps.channel }),
    // Tasks are served to a 2025-11-25 client that negotiates them; this revision lists no `execution`.
    listTools: () => (listed ??= { tools: listToolsResult(tools).tools.map(({ execution: _, ...t }) => t) }),
    callTool: (params) => callTool(byName, deps.makeCtx, params) as unknown as Record<string, unknown>,
    callWaiting: (params) => dispatchTool(byName, deps.makeCtx, params, { notify: (n) => io.send({ jsonrpc: '2.0', ...n }) }) as unknown as Record<string, unknown> | Promise<Record<string, unknown>>,
    send: io.send,
    warn: io.warn,
    ...(io.intervalMs !== undefined ? { intervalMs: io.intervalMs } : {}),
  });
}
