// `attend mcp`: serve the attend verbs over stdio until the client hangs up. The SDK is
// loaded here, lazily, so the other commands never pay for it.

import type { Ctx } from '../context.js';
import { VERSION } from '../version.js';

export interface McpInput {
  makeCtx(): Ctx;
  /**
   * Run as a Claude Code channel: declare `claude/channel` and push inbound messages. Off by
   * default, because a pushed message is recorded as delivered: a client that does not
   * listen for the notification would make it skip the sensor and the Stop hook.
   */
  channel?: boolean;
  intervalMs?: number;
}

export async function runMcp(ctx: Ctx, input: McpInput): Promise<{ closed: true }> {
  const [{ createServer }, { StdioServerTransport }] = await Promise.all([
    import('../../mcp/server.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
  ]);
  // Touch the bus root now, so an unusable one fails at start with the CLI's error.
  ctx.root();
  const server = createServer({ makeCtx: input.makeCtx, version: VERSION, channel: input.channel ?? false });
  let push: { stop(): void } | undefined;
  if (input.channel) {
    const { CHANNEL_METHOD, startChannelPush } = await import('../../mcp/channel.js');
    // Push only once the client has finished the handshake and can take notifications.
    server.oninitialized = () => {
      push = startChannelPush({
        makeCtx: input.makeCtx,
        emit: (n) => void server.notification({ method: CHANNEL_METHOD, params: { content: n.content, meta: n.meta } }).catch(() => undefined),
        warn: (line) => void ctx.stderr.write(`${line}\n`),
        ...(input.intervalMs !== undefined ? { intervalMs: input.intervalMs } : {}),
      });
    };
  }
  const transport = new StdioServerTransport(ctx.stdin as NodeJS.ReadStream, ctx.stdout as unknown as NodeJS.WriteStream);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    ctx.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  push?.stop();
  await server.close().catch(() => undefined);
  return { closed: true };
}
