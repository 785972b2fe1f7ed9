// A scripted Messages API server on 127.0.0.1, so a real Claude Code runs with no account and
// no network (see ../shared/claude-code.md). Every request carries the whole conversation, so
// a test decides each reply from what the model would have seen, and asserts on it after.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

// Side requests (titles, summaries, quota probes) come without the main tool list.
function isMain(req: ApiRequest): boolean {
  return Array.isArray(req.tools) && req.tools.some((t) => t.name === 'Bash');
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

let toolCounter = 0;

function contentFor(reply: Reply): ContentBlock {
  if ('text' in reply) return { type: 'text', text: reply.text };
  return { type: 'tool_use', id: `toolu_fake${String(++toolCounter).padStart(6, '0')}`, name: reply.tool, input: reply.input };
}

function respond(res: ServerResponse, req: ApiRequest, reply: Reply): void {
  const block = contentFor(reply);
  const stopReason = block.type === 'tool_use' ? 'tool_use' : 'end_turn';
  const id = `msg_fake${Date.now()}${toolCounter}`;
  const model = req.model ?? 'claude-test';
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (req.stream === false || req.stream === undefined) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': id });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content: [block], stop_reason: stopReason, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': id });
  sse(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } });
  if (block.type === 'text') {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } });
  } else {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
  }
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeAnthropic(script: Script): Promise<FakeAnthropic> {
  const requests: ApiRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      if (req.method !== 'POST' || path !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not scripted' } }));
        return;
      }
      let parsed: ApiRequest;
      try {
        parsed = JSON.parse(body) as ApiRequest;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const main = isMain(parsed);
      if (main) requests.push(parsed);
      let reply: Reply;
      try {
        reply = main ? script(parsed, { main, turn: requests.length }) : { text: 'ok' };
      } catch (err) {
        reply = { text: `script error: ${(err as Error).message}` };
      }
      respond(res, parsed, reply);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
