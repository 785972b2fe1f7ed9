// The deliverer's two sockets (issue 21 §2; ../shared/claude-code.md, "Delivery paths: the
// inbox socket"): the session's inbox (CLAUDE_CODE_MESSAGING_SOCKET), where one post is one
// connection carrying one JSON line and nothing comes back, and the deliverer's own reply
// socket, `<socket dir>/<its pid>.sock`: Claude Code sends receipts (held, refused, expired,
// dropped) only to a `uds:` address in its socket directory bound by the posting process
// itself, and a model's `SendMessage` to that address arrives there too. A delivered post
// gets no receipt, and one that is held or refused gets it on its own time (tens to hundreds
// of milliseconds on a busy machine, minutes for a held post that expires), so receipts are
// handed on as they come (tools/sensor/deliverer.ts gives the post's messages back).

import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type InboxReceipt, type ReplyLine, parseReplyLine } from '../wire/inbox-post.js';

const POST_TIMEOUT_MS = 2_000;
const MAX_LINE = 1_048_576;

/** Post one line to the inbox socket: resolves once it is written and the connection closed. */
export function postLine(socketPath: string, line: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        conn.destroy();
        reject(err);
      } else resolve();
    };
    const conn: Socket = createConnection(socketPath);
    const timer = setTimeout(() => done(new Error(`no answer from ${socketPath} in ${POST_TIMEOUT_MS} ms`)), POST_TIMEOUT_MS);
    conn.on('connect', () => {
      conn.end(`${line}\n`, () => done());
    });
    conn.on('error', (err) => done(err));
    conn.resume();
  });
}

export interface ReplySocket {
  /** The `from` of every post: `uds:<path>`. */
  address: string;
  close(): void;
}

interface ReplyHandlers {
  /** What a model sent to the address with SendMessage. */
  answer(a: Extract<ReplyLine, { kind: 'answer' }>): void;
  /** A receipt: the post `of` was held, refused, expired or dropped. */
  receipt(status: InboxReceipt, of: string): void;
}

/** Bind `<dir of the inbox socket>/<pid>.sock` and hand on what comes to it. */
export function openReplySocket(inboxSocket: string, pid: number, on: ReplyHandlers): Promise<ReplySocket> {
  const path = join(dirname(inboxSocket), `${pid}.sock`);
  // Only a process that had this pid before us can have left the name behind.
  try {
    unlinkSync(path);
  } catch {
    // not there
  }
  const onLine = (line: string) => {
    const r = parseReplyLine(line);
    if (r.kind === 'answer') on.answer(r);
    else if (r.kind === 'receipt') on.receipt(r.status, r.of);
  };
  const server: Server = createServer((conn) => {
    let buf = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      if (buf.length > MAX_LINE) conn.destroy();
    });
    conn.on('end', () => {
      if (buf.trim().length > 0) onLine(buf);
      buf = '';
    });
    conn.on('error', () => {});
  });
  return new Promise<ReplySocket>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      server.unref();
      resolve({
        address: `uds:${path}`,
        close: () => {
          server.close();
          try {
            unlinkSync(path);
          } catch {
            // already gone
          }
        },
      });
    });
  });
}
