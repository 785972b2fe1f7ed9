// A raw JSON-RPC client for MCP over stdio, written from the specification rather than from
// an SDK (basic/transports/stdio: one message per line, UTF-8): it spawns a server, writes
// requests, and collects every line the server writes, so a test can wait for a response by
// id or for a notification by predicate, each with a deadline.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { waitFor } from './temp-bus.js';

export type WireMessage = Record<string, unknown> & { id?: string | number | null; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

export interface WireClient {
  /** Every message the server wrote, in order. */
  received: WireMessage[];
  /** Write one message. */
  write(m: Record<string, unknown>): void;
  /** Write a request and wait for the response with its id. */
  request(method: string, params: Record<string, unknown>, id?: string | number): Promise<WireMessage>;
  /** Wait for a message the predicate picks, among those received so far and later. */
  next(pick: (m: WireMessage) => boolean, what: string): Promise<WireMessage>;
  stderr(): string;
  /** Close stdin and wait for the process to exit. */
  close(): Promise<number | null>;
}

export function spawnWire(command: string, args: string[], opts: { env: Record<string, string>; cwd?: string }): WireClient {
  const child: ChildProcessWithoutNullStreams = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const received: WireMessage[] = [];
  let err = '';
  let exited: number | null | undefined;
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  createInterface({ input: child.stdout }).on('line', (line) => {
    // The transport's rule: the server writes nothing to stdout that is not a message.
    received.push(JSON.parse(line) as WireMessage);
  });
  const done = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exited = code;
      resolve(code);
    }),
  );
  let seq = 0;
  const next = (pick: (m: WireMessage) => boolean, what: string) => waitFor(() => received.find(pick), { timeoutMs: 20_000, what: `${what} (stderr: ${err.slice(-500)})` });
  return {
    received,
    write: (m) => void child.stdin.write(`${JSON.stringify(m)}\n`),
    async request(method, params, id = `r${++seq}`) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return next((m) => m.id === id && ('result' in m || 'error' in m), `the answer to ${method} (${String(id)})`);
    },
    next,
    stderr: () => err,
    async close() {
      if (exited === undefined) child.stdin.end();
      return done;
    },
  };
}
