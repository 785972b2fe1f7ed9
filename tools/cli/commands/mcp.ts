// `attend mcp`: serve the attend verbs over stdio until the client hangs up. The SDK is
// loaded here, lazily, so the other commands never pay for it.

import type { Ctx } from '../context.js';
import { VERSION } from '../version.js';

export interface McpInput {
  makeCtx(): Ctx;
}

export async function runMcp(ctx: Ctx, input: McpInput): Promise<{ closed: true }> {
  const [{ createServer }, { StdioServerTransport }] = await Promise.all([
    import('../../mcp/server.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
  ]);
  // Touch the bus root now, so an unusable one fails at start with the CLI's error.
  ctx.root();
  const server = createServer({ makeCtx: input.makeCtx, version: VERSION });
  const transport = new StdioServerTransport(ctx.stdin as NodeJS.ReadStream, ctx.stdout as unknown as NodeJS.WriteStream);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    ctx.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  return { closed: true };
}
