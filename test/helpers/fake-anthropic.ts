// A scripted Messages API server on 127.0.0.1, so a real Claude Code runs with no account and
// no network (see ../shared/claude-code.md; the server is scripts/lib/fake-anthropic.mjs,
// which the benchmarks share). Every request carries the whole conversation, so a test
// decides each reply from what the model would have seen, and asserts on it after.

import { startFakeAnthropic as startServer } from '../../scripts/lib/fake-anthropic.mjs';

export interface ContentBlock {
  type: string;
  text?: string;
  name?: string;
  id?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

export interface ApiMessage {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

export interface ApiRequest {
  model?: string;
  system?: unknown;
  messages: ApiMessage[];
  tools?: { name: string }[];
  stream?: boolean;
}

export type Reply = { text: string } | { tool: string; input: Record<string, unknown> };

/** Decides the reply to one request. `main` is false for Claude Code's side requests. */
export type Script = (req: ApiRequest, ctx: { main: boolean; turn: number }) => Reply;

export interface FakeAnthropic {
  url: string;
  /** Every main-conversation request, in arrival order. */
  requests: ApiRequest[];
  close(): Promise<void>;
}

/** All text of a message, tool results included, flattened for assertions. */
export function textOf(content: string | ContentBlock[] | unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: ContentBlock) => {
      if (b.type === 'text') return b.text ?? '';
      if (b.type === 'tool_result') return textOf(b.content);
      if (b.type === 'tool_use') return `tool_use ${b.name} ${JSON.stringify(b.input)}`;
      return '';
    })
    .join('\n');
}

/** Everything the model has seen in one request, as text. */
export function conversationText(req: ApiRequest): string {
  return req.messages.map((m) => textOf(m.content)).join('\n');
}

/** The last message of a request (what arrived since the model last spoke). */
export function lastText(req: ApiRequest): string {
  const last = req.messages[req.messages.length - 1];
  return last ? textOf(last.content) : '';
}

/** How many tool results the conversation already holds: the step the script is on. */
export function toolResultCount(req: ApiRequest): number {
  let n = 0;
  for (const m of req.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') n++;
  return n;
}

/** The tools a request offers the model, by name: built-in ones and the deferred ones ToolSearch has loaded. */
export function toolNames(req: ApiRequest): string[] {
  return (req.tools ?? []).map((t) => t.name);
}

export interface ToolResult {
  /** The tool the model called, from the tool_use block the result answers. */
  name: string;
  isError: boolean;
  text: string;
}

/** Every tool result of the conversation, in order, with the name of the tool it came from. */
export function toolResults(req: ApiRequest): ToolResult[] {
  const names = new Map<string, string>();
  const out: ToolResult[] = [];
  for (const m of req.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'tool_use' && b.id && b.name) names.set(b.id, b.name);
      if (b.type === 'tool_result') out.push({ name: names.get(b.tool_use_id ?? '') ?? '', isError: b.is_error === true, text: textOf(b.content) });
    }
  }
  return out;
}

/**
 * The step a model takes to load deferred tools (an MCP server's), until they are loaded:
 * ToolSearch `select:<names>`, or null once every name is in the request's tools. While the
 * server is still connecting, Claude Code's ToolSearch waits a while, then answers "Some MCP
 * servers are still connecting ... try searching again", and this searches again, as a model
 * would: a script that calls an MCP tool waits for its server to be up (initialize and
 * tools/list answered), never for a fixed time. After `tries` searches, or once Claude Code
 * says the server failed, it ends the turn instead, and the test's assertions say what is
 * missing.
 */
export function loadTools(req: ApiRequest, names: string[], tries = 12): Reply | null {
  const have = new Set(toolNames(req));
  if (names.every((n) => have.has(n))) return null;
  const searches = toolResults(req).filter((r) => r.name === 'ToolSearch');
  const last = searches.at(-1)?.text ?? '';
  if (searches.length >= tries || /failed to connect/.test(last)) return { text: `could not load ${names.join(', ')}: ${last.slice(0, 300)}` };
  return { tool: 'ToolSearch', input: { query: `select:${names.join(',')}` } };
}

/** Start the scripted server (scripts/lib/fake-anthropic.mjs, which the benchmarks share). */
export function startFakeAnthropic(script: Script): Promise<FakeAnthropic> {
  return startServer<ApiRequest, Reply>(script);
}
