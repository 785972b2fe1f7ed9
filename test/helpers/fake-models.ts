// Scripted model servers on 127.0.0.1 for the real Codex and Gemini CLI (test/helpers/agent-clis.ts),
// the way fake-anthropic.ts serves Claude Code: every request carries the whole conversation, so
// the script decides each reply from the tool results the model would have seen.
// - Codex: the OpenAI Responses API, `POST <base_url>/responses`, answered with an event stream
//   (`response.created`, `response.output_item.done` carrying a `function_call` or an assistant
//   `message`, `response.completed`), the events Codex's own SDK tests replay.
// - Gemini CLI: the Gemini API, `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
//   (each `data:` line a GenerateContentResponse) and `:generateContent` (one JSON body).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** One request as the script sees it, whichever API it came on. */
export interface ModelTurn {
  /** The tools the request offers, by the name the model calls them with. */
  tools: string[];
  /** The output of every tool call so far, in order. */
  results: { name: string; output: string }[];
  /** All text of the conversation, tool outputs included. */
  text: string;
}

export type ModelReply = { text: string } | { tool: string; args: Record<string, unknown> };
export type ModelScript = (turn: ModelTurn) => ModelReply;

export interface FakeModel {
  /** The base URL to configure the CLI with. */
  url: string;
  /** Every main-conversation request, as the script saw it. */
  turns: ModelTurn[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function serve(handle: (path: string, body: unknown, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    void readBody(req)
      .then((raw) => {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        handle(req.url ?? '', body, res);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(flatten).join('\n');
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.text === 'string') return o.text;
    // Gemini CLI answers a function call with `{output: "<text>"}` (or `{error: ...}`).
    if (typeof o.output === 'string') return o.output;
    return JSON.stringify(value);
  }
  return value === undefined || value === null ? '' : String(value);
}

function decide(script: ModelScript, turn: ModelTurn): ModelReply {
  try {
    return script(turn);
  } catch (err) {
    return { text: `script error: ${(err as Error).message}` };
  }
}

// ---------------------------------------------------------------------------------------------
// Codex: the Responses API.

interface ResponsesItem {
  type?: string;
  role?: string;
  name?: string;
  namespace?: string;
  call_id?: string;
  arguments?: string;
  output?: unknown;
  content?: unknown;
}

interface ResponsesRequest {
  input?: ResponsesItem[];
  tools?: { type?: string; name?: string; tools?: { name?: string }[] }[];
}

/** A tool's name as the model calls it: namespaced tools (MCP servers') as `<namespace><name>`. */
function responsesToolNames(req: ResponsesRequest): string[] {
  const out: string[] = [];
  for (const t of req.tools ?? []) {
    if (t.type === 'namespace' && t.name) for (const inner of t.tools ?? []) out.push(`${t.name}${inner.name ?? ''}`);
    else if (t.name) out.push(t.name);
  }
  return out;
}

function responsesTurn(req: ResponsesRequest): ModelTurn {
  const names = new Map<string, string>();
  const results: ModelTurn['results'] = [];
  const text: string[] = [];
  for (const item of req.input ?? []) {
    if (item.type === 'function_call' && item.call_id) names.set(item.call_id, `${item.namespace ?? ''}${item.name ?? ''}`);
    if (item.type === 'function_call_output') {
      const output = flatten(item.output);
      results.push({ name: names.get(item.call_id ?? '') ?? '', output });
      text.push(output);
    }
    if (item.type === 'message') text.push(flatten(item.content));
  }
  return { tools: responsesToolNames(req), results, text: text.join('\n') };
}

let codexCalls = 0;

function sse(res: ServerResponse, event: Record<string, unknown>): void {
  res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** A Responses API server for Codex (`wire_api = "responses"`, base_url `<url>/v1`). */
export async function startFakeResponses(script: ModelScript): Promise<FakeModel> {
  const turns: ModelTurn[] = [];
  const server = await serve((path, body, res) => {
    if (!path.startsWith('/v1/responses') || !body) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'not scripted', type: 'invalid_request_error' } }));
      return;
    }
    const turn = responsesTurn(body as ResponsesRequest);
    turns.push(turn);
    const reply = decide(script, turn);
    const n = ++codexCalls;
    const id = `resp_fake${n}`;
    // A namespaced tool (an MCP server's) is called with its namespace and its own name.
    const ns = 'tool' in reply ? (body as ResponsesRequest).tools?.find((t) => t.type === 'namespace' && t.name && reply.tool.startsWith(t.name) && t.tools?.some((i) => `${t.name}${i.name}` === reply.tool)) : undefined;
    const item =
      'tool' in reply
        ? { type: 'function_call', id: `fc_fake${n}`, call_id: `call_fake${n}`, ...(ns ? { namespace: ns.name, name: reply.tool.slice(ns.name!.length) } : { name: reply.tool }), arguments: JSON.stringify(reply.args) }
        : { type: 'message', role: 'assistant', id: `msg_fake${n}`, content: [{ type: 'output_text', text: reply.text }] };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    sse(res, { type: 'response.created', response: { id } });
    sse(res, { type: 'response.output_item.done', item });
    sse(res, { type: 'response.completed', response: { id, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 } } });
    res.end();
  });
  return { url: server.url, turns, close: server.close };
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI: the Gemini API.

interface GeminiPart {
  text?: string;
  functionCall?: { name?: string; args?: unknown };
  functionResponse?: { name?: string; response?: unknown };
}

interface GeminiRequest {
  contents?: { role?: string; parts?: GeminiPart[] }[];
  tools?: { functionDeclarations?: { name?: string }[] }[];
}

function geminiTurn(req: GeminiRequest): ModelTurn {
  const results: ModelTurn['results'] = [];
  const text: string[] = [];
  for (const c of req.contents ?? []) {
    for (const p of c.parts ?? []) {
      if (p.text) text.push(p.text);
      if (p.functionResponse) {
        const output = flatten(p.functionResponse.response);
        results.push({ name: p.functionResponse.name ?? '', output });
        text.push(output);
      }
    }
  }
  const tools = (req.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((d) => d.name ?? ''));
  return { tools, results, text: text.join('\n') };
}

/** A Gemini API server for Gemini CLI (GOOGLE_GEMINI_BASE_URL=<url>). */
export async function startFakeGemini(script: ModelScript): Promise<FakeModel> {
  const turns: ModelTurn[] = [];
  const server = await serve((path, body, res) => {
    const m = /^\/v1beta\/models\/[^:/]+:(streamGenerateContent|generateContent)/.exec(path);
    if (!m || !body) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: 'not scripted', status: 'NOT_FOUND' } }));
      return;
    }
    const req = body as GeminiRequest;
    const turn = geminiTurn(req);
    // Side requests (routing, summaries, next-speaker checks) offer no tools.
    const main = turn.tools.length > 0;
    if (main) turns.push(turn);
    const reply: ModelReply = main ? decide(script, turn) : { text: '{}' };
    const part = 'tool' in reply ? { functionCall: { name: reply.tool, args: reply.args } } : { text: reply.text };
    const response = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'gemini-test',
    };
    if (m[1] === 'generateContent') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(response)}\r\n\r\n`);
    res.end();
  });
  return { url: server.url, turns, close: server.close };
}
