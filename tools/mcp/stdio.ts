// The stdio transport of `attend mcp`, built to answer `initialize` fast (issue #11 §9).
// The SDK and zod cost several times node's own start-up to load, and a client waits for
// the `initialize` answer before anything else. So this module (no SDK, no zod) answers it
// at once from info.ts, then loads the real server and hands it everything: the
// `initialize` request again (so the SDK Server knows the client), whose second answer is
// dropped, then whatever arrived meanwhile, in order.
//
// Framing is the MCP stdio transport's: one JSON-RPC message per line, UTF-8.

import { type ServerIdentity, initializeResult } from './info.js';
import { claimsModern } from './modern.js';

type Message = Record<string, unknown>;

/** The shape of the SDK's Transport that Server.connect uses. */
export interface LatePort {
  start(): Promise<void>;
  send(message: Message): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: Message) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
}

interface StdioOptions {
  input: NodeJS.ReadableStream;
  output: { write(text: string): unknown };
  identity: ServerIdentity;
  /**
   * The `tools/list` result, precomputed at build time (postbuild writes it from the same
   * tool definitions), so a client can list the tools before the server has loaded too.
   * Null when there is none; then `tools/list` waits for the server like everything else.
   */
  earlyTools?: (() => { tools: unknown[] } | null) | undefined;
  /** Load the real server and connect it to the port (Server.connect). */
  attach(port: LatePort): Promise<void>;
  warn(line: string): void;
}

/** A line at most this long is read (a message body is at most 64 KiB; JSON may double it). */
const MAX_LINE = 4 * 1024 * 1024;

/**
 * Serve until stdin ends. Rejects with attach's error when the server cannot start (an
 * unusable bus root): the client has its `initialize` answer, and then the process ends.
 */
export function serveStdio(opts: StdioOptions): Promise<void> {
  // Requests answered before the server loaded, by id: the server's own answers to them,
  // when it has replayed them, are compared and dropped.
  const early = new Map<unknown, { method: string; answer: string }>();
  const queue: Message[] = [];
  let port: LatePort | null = null;
  let attaching: Promise<void> | null = null;
  let closed = false;
  let failed: unknown;
  let finish: () => void = () => {};

  const write = (m: Message) => opts.output.write(`${JSON.stringify(m)}\n`);

  const late: LatePort = {
    start: async () => undefined,
    send: async (m) => {
      // The server's own answer to a request that was answered early.
      const answered = 'id' in m ? early.get(m.id) : undefined;
      if (answered) {
        early.delete(m.id);
        const same = JSON.stringify(m.result) === answered.answer;
        if (!same) opts.warn(`attend mcp: the server's ${answered.method} answer differs from the early one: ${JSON.stringify(m.result ?? m.error).slice(0, 500)}`);
        return;
      }
      write(m);
    },
    close: async () => undefined,
  };

  const attach = () => {
    attaching ??= opts.attach(late).then(
      () => {
        port = late;
        for (const m of queue.splice(0)) port.onmessage?.(m);
        if (closed) port.onclose?.();
      },
      (err: unknown) => {
        failed = err;
        finish();
      },
    );
  };

  let toolsCache: { tools: unknown[] } | null | undefined;
  const earlyTools = () => {
    if (toolsCache === undefined) {
      try {
        toolsCache = opts.earlyTools?.() ?? null;
      } catch {
        toolsCache = null;
      }
    }
    return toolsCache;
  };
  const answerEarly = (msg: Message, result: Record<string, unknown>) => {
    early.set(msg.id, { method: String(msg.method), answer: JSON.stringify(result) });
    write({ jsonrpc: '2.0', id: msg.id, result });
  };

  const receive = (line: string) => {
    let m: unknown;
    try {
      m = JSON.parse(line);
    } catch {
      write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: a line that is not JSON' } });
      return;
    }
    if (typeof m !== 'object' || m === null || Array.isArray(m)) {
      write({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC message object' } });
      return;
    }
    const msg = m as Message;
    if (port) {
      port.onmessage?.(msg);
      return;
    }
    if (!attaching && early.size === 0 && msg.method === 'initialize' && msg.id !== undefined) {
      const params = (msg.params ?? {}) as { protocolVersion?: unknown };
      answerEarly(msg, initializeResult(opts.identity, params.protocolVersion));
    } else if (msg.method === 'tools/list' && msg.id !== undefined && !claimsModern(msg) && [...early.values()].some((e) => e.method === 'initialize')) {
      // (A stateless 2026-07-28 tools/list waits for modern.ts, whose result has more fields.)
      const tools = earlyTools();
      if (tools) answerEarly(msg, tools);
    }
    queue.push(msg);
    // Load after the answer is out; the client reads it while the server loads.
    setImmediate(attach);
  };

  return new Promise<void>((resolve, reject) => {
    finish = () => {
      closed = true;
      if (failed !== undefined) reject(failed);
      else resolve();
    };
    let buf = '';
    opts.input.setEncoding?.('utf8');
    opts.input.on('data', (chunk: string | Buffer) => {
      buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        if (line.trim() !== '') receive(line);
      }
      if (buf.length > MAX_LINE) {
        opts.warn(`attend mcp: a message over ${MAX_LINE} bytes was dropped`);
        buf = '';
      }
    });
    const end = () => {
      if (closed) return;
      if (port) port.onclose?.();
      finish();
    };
    opts.input.once('end', end);
    opts.input.once('close', end);
  });
}
