// A scripted Messages API server on 127.0.0.1, so a real Claude Code runs with no account and
// no network (../shared/claude-code.md): it answers `POST /v1/messages` with the event stream
// (or the JSON body) of one reply the script chooses, a text or one tool_use block. Shared by
// the e2e tests (test/helpers/fake-anthropic.ts adds the types and the assertion helpers) and
// the benchmarks that drive a real Claude Code (scripts/bench/deliverer.mjs).

import { createServer } from 'node:http';

// Side requests (titles, summaries, quota probes) come without the main tool list.
function isMain(req) {
  return Array.isArray(req.tools) && req.tools.some((t) => t.name === 'Bash');
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

let toolCounter = 0;

function contentFor(reply) {
  if ('text' in reply) return { type: 'text', text: reply.text };
  return { type: 'tool_use', id: `toolu_fake${String(++toolCounter).padStart(6, '0')}`, name: reply.tool, input: reply.input };
}

function respond(res, req, reply) {
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

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Start the server; `script(request, { main, turn })` chooses each main-conversation reply. */
export async function startFakeAnthropic(script) {
  const requests = [];
  const server = createServer((req, res) => {
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
      let parsed;
      try {
        parsed = JSON.parse(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const main = isMain(parsed);
      if (main) requests.push(parsed);
      let reply;
      try {
        reply = main ? script(parsed, { main, turn: requests.length }) : { text: 'ok' };
      } catch (err) {
        reply = { text: `script error: ${err.message}` };
      }
      respond(res, parsed, reply);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
