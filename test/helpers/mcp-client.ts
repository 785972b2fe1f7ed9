// The MCP SDK's own Client over stdio, spawning the built `attend mcp` as the given party:
// the real client the e2e tests talk to attend through.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN } from './bus.js';

export async function connectMcp(party: { env: Record<string, string>; cwd?: string }, opts: { name?: string; args?: string[] } = {}): Promise<Client> {
  const client = new Client({ name: opts.name ?? 'attend-test', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...(opts.args ?? [])], env: party.env, ...(party.cwd !== undefined ? { cwd: party.cwd } : {}), stderr: 'pipe' }));
  return client;
}
