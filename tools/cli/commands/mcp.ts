// `attend mcp`: serve the attend verbs over stdio until the client hangs up. The stdio layer
// answers `initialize` before the SDK and the tools load (tools/mcp/stdio.ts, issue #11 §9);
// attachServer loads them right after. The plain `attend mcp [--channel]` that a client
// starts goes through fast-mcp.ts, which skips commander and the CLI's context on the way to
// that first answer; this command is the same server for every other route.

import type { Ctx } from '../context.js';
import type { LatePort } from '../../mcp/stdio.js';
import { VERSION } from '../version.js';

interface McpInput {
  makeCtx(): Ctx;
  /**
   * Run as a Claude Code channel: declare `claude/channel` and push inbound messages. Off by
   * default, because a pushed message is recorded as delivered: a client that does not
   * listen for the notification would make it skip the sensor and the Stop hook.
   */
  channel?: boolean;
  intervalMs?: number;
  warn(line: string): void;
}

interface Attached {
  close(): Promise<void>;
}

/** Load the SDK server and the tools and connect them to the port stdio.ts hands over. */
export async function attachServer(port: LatePort, input: McpInput): Promise<Attached> {
  const { createModern, createServer } = await import('../../mcp/server.js');
  const deps = { makeCtx: input.makeCtx, version: VERSION, channel: input.channel ?? false };
  const s = createServer(deps);
  let push: { stop(): void } | undefined;
  if (input.channel) {
    const { CHANNEL_METHOD, startChannelPush } = await import('../../mcp/channel.js');
    // Push only once the client has finished the handshake and can take notifications.
    s.oninitialized = () => {
      push = startChannelPush({
        makeCtx: input.makeCtx,
        emit: (n) => void s.notification({ method: CHANNEL_METHOD, params: { content: n.content, meta: n.meta } }).catch(() => undefined),
        warn: input.warn,
        ...(input.intervalMs !== undefined ? { intervalMs: input.intervalMs } : {}),
      });
    };
  }
  await s.connect(port as unknown as Parameters<typeof s.connect>[0]);
  // 2026-07-28 in front of the SDK: a message with the per-request envelope is served
  // statelessly by the modern layer, anything else reaches the SDK Server as before.
  const modern = createModern(deps, { send: (m) => void port.send(m), warn: input.warn, intervalMs: input.intervalMs });
  const legacy = port.onmessage;
  port.onmessage = (m) => (modern.owns(m) ? modern.handle(m) : legacy?.(m));
  return {
    async close() {
      modern.close();
      push?.stop();
      s.closeTasks();
      await s.close().catch(() => undefined);
    },
  };
}

export async function runMcp(ctx: Ctx, input: Omit<McpInput, 'warn'>): Promise<{ closed: true }> {
  const [{ serveStdio }, { serverIdentity }] = await Promise.all([import('../../mcp/stdio.js'), import('../../mcp/info.js')]);
  // Touch the bus root now, so an unusable one fails at start with the CLI's error.
  ctx.root();
  const warn = (line: string) => void ctx.stderr.write(`${line}\n`);
  let attached: Attached | undefined;
  await serveStdio({
    input: ctx.stdin,
    output: ctx.stdout,
    identity: serverIdentity({ version: VERSION, channel: input.channel ?? false }),
    warn,
    attach: async (port) => {
      attached = await attachServer(port, { ...input, warn });
    },
  });
  await attached?.close();
  return { closed: true };
}
