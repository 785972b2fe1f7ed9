// The stdio transport of `attend mcp`, built to answer `initialize` fast (issue #11 §9).
// The SDK and zod cost several times node's own start-up to load, and a client waits for
// the `initialize` answer before anything else. So this module (no SDK, no zod) answers it
// at once from info.ts, then loads the real server and hands it everything: the
// `initialize` request again (so the SDK Server knows the client), whose second answer is
// dropped, then whatever arrived meanwhile, in order.
//
// Framing is the MCP stdio transport's: one JSON-RPC message per line, UTF-8.

import { type ServerIdentity, initializeResult } from './info.js';

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

export interface StdioOptions {
  input: NodeJS.ReadableStream;
  output: { write(text: string): unknown };
  identity: ServerIdentity;
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
  let early: { id: unknown; answer: string } | null = null;
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
      // The SDK's own answer to the `initialize` that was answered early.
      if (early && 'result' in m && m.id === early.id) {
        const same = JSON.stringify(m.result) === early.answer;
        early = null;
        if (!same) opts.warn(`attend mcp: the server's initialize answer differs from the early one: ${JSON.stringify(m.result)}`);
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
    if (!attaching && msg.method === 'initialize' && msg.id !== undefined) {
      const params = (msg.params ?? {}) as { protocolVersion?: unknown };
      const result = initializeResult(opts.identity, params.protocolVersion);
      early = { id: msg.id, answer: JSON.stringify(result) };
      write({ jsonrpc: '2.0', id: msg.id, result });
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
