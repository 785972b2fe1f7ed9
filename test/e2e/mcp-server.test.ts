// The MCP server over stdio, driven by the SDK's own client: identity from the server's
// ancestry, names resolved to ids, domain failures as tool errors, bad input as protocol errors.

import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type FakeSession, type TempBus, fakeSession, makeTempBus, runBin } from '../helpers/bus.js';
import { signalsIn } from '../helpers/signals.js';

let bus: TempBus;
let me: FakeSession;
let peer: FakeSession;
let client: Client;

async function connect(env: Record<string, string>, cwd: string): Promise<Client> {
  const c = new Client({ name: 'attend-test', version: '0.0.0' });
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env, cwd, stderr: 'pipe' }));
  return c;
}

function text(result: unknown): string {
  const r = result as { content: { type: string; text: string }[] };
  return r.content.map((c) => c.text).join('\n');
}

/** The messages in a scope directory given by its path under the bus root. */
const signalsAt = (dir: string) => signalsIn(bus.root, relative(join(bus.root, 'signals'), dir));

beforeEach(async () => {
  bus = makeTempBus();
  me = fakeSession(bus, { name: 'mcp-me' });
  peer = fakeSession(bus, { name: 'the-peer' });
  client = await connect(me.env, me.cwd);
});

afterEach(async () => {
  await client.close();
  me.kill();
  peer.kill();
  bus.cleanup();
});

describe('attend mcp', () => {
  it('lists typed tools, none of which takes from_kind or from_id', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['channels', 'inbox', 'join', 'leave', 'peers', 'read', 'reply', 'send', 'whoami']);
    const send = tools.find((t) => t.name === 'send')!;
    expect(Object.keys(send.inputSchema.properties ?? {}).sort()).toEqual(['channel', 'message', 'on_behalf_of', 'to']);
    for (const t of tools) {
      const props = Object.keys(t.inputSchema.properties ?? {});
      expect(props).not.toContain('from_kind');
      expect(props).not.toContain('from_id');
    }
  });

  it('whoami is the session that owns the server process', async () => {
    const r = JSON.parse(text(await client.callTool({ name: 'whoami', arguments: {} }))) as { id: string; kind: string; displayName: string };
    expect(r).toMatchObject({ id: me.sessionId, kind: 'agent', displayName: 'mcp-me' });
  });

  it('send writes an envelope with the resolved identity, and resolves a display name to an id', async () => {
    const open = JSON.parse(text(await client.callTool({ name: 'send', arguments: { message: 'hello #open' } }))) as { id: string };
    const [b] = signalsAt(join(bus.root, 'signals', '_broadcast'));
    expect(b).toMatchObject({ id: open.id, env: { fromKind: 'agent', fromId: me.sessionId, to: '*', body: 'hello #open' } });

    const direct = JSON.parse(text(await client.callTool({ name: 'send', arguments: { message: 'just you', to: ['the-peer'], on_behalf_of: 'tester' } }))) as { id: string; to: string };
    expect(direct.to).toBe(peer.sessionId);
    const trayDir = join(bus.root, 'signals', readdirSync(join(bus.root, 'signals')).find((d) => d !== '_broadcast')!);
    const [d] = signalsAt(trayDir);
    expect(d).toMatchObject({ id: direct.id, env: { fromId: me.sessionId, to: peer.sessionId, onBehalfOf: 'tester', body: 'just you' } });
  });

  it('inbox, read and reply work over the same bus the CLI writes', async () => {
    const sent = runBin(['send', '--to', me.sessionId, 'ping from the peer'], { env: peer.env, cwd: peer.cwd });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const id = sent.stdout.trim();
    const inbox = JSON.parse(text(await client.callTool({ name: 'inbox', arguments: { limit: 5 } }))) as { messages: { id: string; body: string; fromId: string }[] };
    expect(inbox.messages[0]).toMatchObject({ id, body: 'ping from the peer', fromId: peer.sessionId });
    const read = JSON.parse(text(await client.callTool({ name: 'read', arguments: { id } }))) as { body: string };
    expect(read.body).toBe('ping from the peer');
    const reply = JSON.parse(text(await client.callTool({ name: 'reply', arguments: { message: 'pong' } }))) as { re: string; to: string };
    expect(reply).toMatchObject({ re: id, to: peer.sessionId });
  });

  it('peers, join, channels, send to a channel and leave', async () => {
    const peers = JSON.parse(text(await client.callTool({ name: 'peers', arguments: {} }))) as { peers: { id: string; name: string; me: boolean }[] };
    expect(peers.peers.find((p) => p.name === 'the-peer')?.id).toBe(peer.sessionId);
    expect(peers.peers.find((p) => p.me)?.id).toBe(me.sessionId);
    const joined = JSON.parse(text(await client.callTool({ name: 'join', arguments: { channel: '#ops' } }))) as { channel: string; created: boolean };
    expect(joined).toMatchObject({ channel: 'ops', created: true });
    const list = JSON.parse(text(await client.callTool({ name: 'channels', arguments: { joined: true } }))) as { channels: { label: string; joined: boolean }[] };
    expect(list.channels.map((c) => c.label)).toEqual(['#open', '#ops']);
    const sent = JSON.parse(text(await client.callTool({ name: 'send', arguments: { message: 'deploying', channel: 'ops' } }))) as { id: string; to: string };
    expect(sent.to).toBe('#ops');
    expect(signalsAt(join(bus.root, 'signals', '@ops'))).toEqual([expect.objectContaining({ id: sent.id, env: expect.objectContaining({ fromId: me.sessionId, to: '#ops' }) })]);
    const left = JSON.parse(text(await client.callTool({ name: 'leave', arguments: { channel: 'ops' } }))) as { left: boolean };
    expect(left.left).toBe(true);
    const again = (await client.callTool({ name: 'leave', arguments: { channel: 'ops' } })) as { isError?: boolean };
    expect(again.isError).toBe(true);
  });

  it('a domain failure is a tool error with a clear message, and writes nothing', async () => {
    const r = (await client.callTool({ name: 'send', arguments: { message: 'anyone?', to: ['Nobody-here'] } })) as { isError?: boolean };
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/no live recipient 'Nobody-here'/);
    const missing = (await client.callTool({ name: 'read', arguments: { id: 'zzzz0000-00000000' } })) as { isError?: boolean };
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/not found/);
    expect(existsSync(join(bus.root, 'signals'))).toBe(false);
  });

  it('bad input is a protocol error, including an attempt to pass from_id', async () => {
    const bad = [
      { name: 'send', arguments: {} },
      { name: 'send', arguments: { message: 42 } },
      { name: 'send', arguments: { message: 'forged', from_id: 'someone-else', from_kind: 'human' } },
      { name: 'send', arguments: { message: 'x', channel: 'no way|bad' } },
      { name: 'inbox', arguments: { limit: 0 } },
      { name: 'join', arguments: { channel: 'bad name|x' } },
      { name: 'join', arguments: {} },
      { name: 'no-such-tool', arguments: {} },
    ];
    for (const call of bad) {
      const err = await client.callTool(call).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(call)).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    }
    expect(existsSync(join(bus.root, 'signals'))).toBe(false);
  });
});
