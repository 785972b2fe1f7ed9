// The built `attend mcp` over real stdio: once through the SDK's own client, and once through
// a raw JSON-RPC client written here, as a third-party client that shares no code with the
// server would talk to it (issue #11: the MCP Inspector CLI needs Node >= 22.19, so it cannot
// run here). The tools themselves are covered in-process in mcp-tools.test.ts.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSignal } from '../../tools/wire/envelope.js';
import { BIN, type FakeSession, type TempBus, useTempBus } from '../helpers/bus.js';
import { connectMcp } from '../helpers/mcp-client.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
let me: FakeSession;
beforeEach(() => {
  me = session({ name: 'mcp-me' });
});

function openSignals() {
  const dir = join(bus.root, 'signals', '_broadcast');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.signal'))
    .map((f) => ({ id: f.slice(0, -'.signal'.length), env: parseSignal(readFileSync(join(dir, f), 'utf8').trimEnd())! }));
}

describe('attend mcp over stdio, SDK client', () => {
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  it('serves the tools as the session that owns the server process, and send writes with that identity', async () => {
    client = await connectMcp(me);
    const { tools } = await client.listTools();
    // Every verb of the verbs layer, issue 23's four included (the full list: mcp-tools.test.ts).
    expect(tools).toHaveLength(21);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ask', 'claim', 'claims', 'release', 'focus', 'search']));
    const who = (await client.callTool({ name: 'whoami', arguments: {} })) as unknown as { structuredContent: { id: string; kind: string } };
    expect(who.structuredContent).toMatchObject({ id: me.sessionId, kind: 'agent' });
    const sent = (await client.callTool({ name: 'send', arguments: { message: 'hello over stdio' } })) as unknown as { structuredContent: { id: string } };
    expect(openSignals()).toEqual([{ id: sent.structuredContent.id, env: expect.objectContaining({ fromKind: 'agent', fromId: me.sessionId, to: '*', body: 'hello over stdio' }) }]);
  });
});

/** A minimal JSON-RPC 2.0 client over newline-delimited stdio, as the MCP stdio transport specifies. */
class RawClient {
  private next = 1;
  private waiting = new Map<number, (msg: Record<string, unknown>) => void>();
  readonly stderr: string[] = [];
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as Record<string, unknown>;
      if (typeof msg.id === 'number') this.waiting.get(msg.id)?.(msg);
    });
    child.stderr.on('data', (c: Buffer) => this.stderr.push(c.toString('utf8')));
  }
  request(method: string, params?: unknown): Promise<Record<string, unknown>> {
    const id = this.next++;
    const done = new Promise<Record<string, unknown>>((resolve) => this.waiting.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })}\n`);
    return done;
  }
  notify(method: string): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }
}

describe('attend mcp over stdio, a raw JSON-RPC client', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
    child = undefined;
  });

  it('negotiates 2025-11-25, lists typed tools, and answers bad calls with isError results', async () => {
    child = spawn(process.execPath, [BIN, 'mcp'], { env: me.env, cwd: me.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const rpc = new RawClient(child);
    const init = await rpc.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-json-rpc', version: '1.0.0' } });
    expect(init).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'attend' }, capabilities: { tools: {} } } });
    rpc.notify('notifications/initialized');

    const list = (await rpc.request('tools/list')).result as { tools: { name: string; outputSchema?: { type: string }; annotations?: Record<string, boolean> }[] };
    expect(list.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['send', 'inbox', 'read', 'invite', 'kick', 'create', 'describe', 'dissolve', 'status']));
    for (const t of list.tools) expect(t.outputSchema?.type, t.name).toBe('object');

    const corrections: [unknown, RegExp][] = [
      [{ name: 'send', arguments: { message: 7 } }, /^attend: invalid arguments for send: message: /],
      [{ name: 'send', arguments: null }, /^attend: invalid arguments for send: message: required/],
      [{ name: 'send', arguments: { message: '' } }, /the message is empty/],
      [{ name: 'send', arguments: { message: 'y'.repeat(70_000) } }, /over the limit of 65536 bytes/],
      [{ name: 'nope', arguments: {} }, /^attend: unknown tool 'nope'/],
      [{ arguments: {} }, /^attend: tools\/call needs a tool name/],
    ];
    for (const [params, re] of corrections) {
      const r = await rpc.request('tools/call', params);
      expect(r.error, JSON.stringify(r).slice(0, 300)).toBeUndefined();
      const result = r.result as { isError: boolean; content: { type: string; text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toMatch(re);
    }
    // A good call carries structuredContent and the same JSON as text.
    const ok = (await rpc.request('tools/call', { name: 'send', arguments: { message: 'raw hello' } })).result as { isError?: boolean; structuredContent: { id: string }; content: { text: string }[] };
    expect(ok.isError).toBeFalsy();
    expect(JSON.parse(ok.content[0]!.text)).toEqual(ok.structuredContent);
    expect(openSignals().map((s) => s.id)).toEqual([ok.structuredContent.id]);
    // What is not a tool call at all is still a protocol error.
    expect(((await rpc.request('no/such/method')).error as { code: number }).code).toBe(-32601);
    // initialize and tools/list were answered before the SDK loaded (tools-list.json from the
    // build); the server, once loaded, gave the same answers (stdio.ts warns otherwise).
    expect(rpc.stderr.join('')).toBe('');
  });
});

describe('attend mcp with an unusable bus root', () => {
  it('answers initialize, then ends with the CLI\'s error and exit code 3', async () => {
    const root = join(bus.dir, 'open-root');
    mkdirSync(root);
    chmodSync(root, 0o777);
    const child = spawn(process.execPath, [BIN, 'mcp'], { env: { ...me.env, ATTEND_HOME: root }, cwd: me.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const rpc = new RawClient(child);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const init = await rpc.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    expect(init).toMatchObject({ id: 1, result: { protocolVersion: '2025-11-25' } });
    expect(await exited).toBe(3);
    expect(rpc.stderr.join('')).toMatch(/^attend: the bus root .* is writable by group or others \(mode 777\); run: chmod 700 /m);
  });
});
