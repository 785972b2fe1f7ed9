// tools/mcp/stdio.ts answers `initialize` before the SDK loads (issue #11 §9). Its answer must
// be the one the SDK Server would give, the SDK's second answer must never reach the client,
// and what arrives while the server loads must be answered, in order.

import { PassThrough } from 'node:stream';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../tools/cli/context.js';
import { PROTOCOL_VERSIONS, serverIdentity } from '../../tools/mcp/info.js';
import { createServer, listToolsResult } from '../../tools/mcp/server.js';
import { type LatePort, serveStdio } from '../../tools/mcp/stdio.js';

type Msg = Record<string, unknown> & { id?: number; result?: Record<string, unknown>; error?: { code: number } };

function rig(opts: { channel?: boolean; gate?: Promise<void>; earlyTools?: () => { tools: unknown[] } | null } = {}) {
  const input = new PassThrough();
  const lines: Msg[] = [];
  const warnings: string[] = [];
  let attached = 0;
  let pending = '';
  const output = {
    write(text: string) {
      pending += text;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        lines.push(JSON.parse(pending.slice(0, nl)) as Msg);
        pending = pending.slice(nl + 1);
      }
      return true;
    },
  };
  const done = serveStdio({
    input,
    output,
    identity: serverIdentity({ version: '9.9.9', channel: opts.channel }),
    earlyTools: opts.earlyTools,
    warn: (l) => warnings.push(l),
    attach: async (port: LatePort) => {
      attached++;
      await opts.gate;
      const server = createServer({ makeCtx: () => createContext({ env: {}, cwd: '/' }), version: '9.9.9', channel: opts.channel ?? false });
      await server.connect(port as never);
    },
  });
  const send = (m: unknown) => input.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`);
  return { input, lines, warnings, send, done, attachedCount: () => attached };
}

const init = (version: string) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' } } });

describe('mcp stdio', () => {
  it("knows the SDK's protocol versions, newest first", () => {
    expect(PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS);
  });

  it('answers initialize before the server loads, queues the rest, and answers it in order once loaded', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const r = rig({ gate });
    r.send(init('2025-11-25'));
    r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    r.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    r.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    await expect.poll(() => r.lines.length).toBe(1);
    // The server is still loading (the gate is shut), and the client already has its answer.
    expect(r.lines[0]).toMatchObject({ id: 1, result: { protocolVersion: '2025-11-25', serverInfo: { name: 'attend', version: '9.9.9' }, capabilities: { tools: {} } } });
    open();
    await expect.poll(() => r.lines.length).toBe(3);
    expect(r.lines.map((l) => l.id)).toEqual([1, 2, 3]);
    expect((r.lines[1]!.result as { tools: unknown[] }).tools.length).toBeGreaterThan(10);
    // The SDK answered the replayed initialize identically, and that answer was dropped.
    expect(r.warnings).toEqual([]);
    expect(r.attachedCount()).toBe(1);
    r.input.end();
    await r.done;
  });

  it('with the build-time tool list, answers tools/list before the server loads too, and the server agrees', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    // As postbuild writes it: JSON, read back.
    const r = rig({ gate, earlyTools: () => JSON.parse(JSON.stringify(listToolsResult())) as { tools: unknown[] } });
    r.send(init('2025-11-25'));
    r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    r.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    r.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope', arguments: {} } });
    await expect.poll(() => r.lines.length).toBe(2);
    expect(r.lines.map((l) => l.id)).toEqual([1, 2]);
    expect((r.lines[1]!.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('dissolve');
    open();
    await expect.poll(() => r.lines.length).toBe(3);
    expect(r.lines[2]).toMatchObject({ id: 3, result: { isError: true } });
    // Each early answer was given once; the server's own answers matched and were dropped.
    expect(r.warnings).toEqual([]);
    r.input.end();
    await r.done;
  });

  it('leaves a stateless (2026-07-28) tools/list to the server, even with the build-time list at hand', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const r = rig({ gate, earlyTools: () => JSON.parse(JSON.stringify(listToolsResult())) as { tools: unknown[] } });
    const modern = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } };
    // One chunk: both lines are read before anything else runs.
    r.send(`${JSON.stringify(init('2025-11-25'))}\n${JSON.stringify(modern)}`);
    await expect.poll(() => r.lines.length).toBe(1);
    expect(r.lines[0]!.id).toBe(1);
    open();
    await expect.poll(() => r.lines.length).toBe(2);
    r.input.end();
    await r.done;
  });

  it('warns when the early tool list is stale (the server is the authority from then on)', async () => {
    const r = rig({ earlyTools: () => ({ tools: [{ name: 'old' }] }) });
    r.send(init('2025-11-25'));
    r.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    r.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    await expect.poll(() => r.lines.length).toBe(3);
    expect(r.warnings).toEqual([expect.stringMatching(/the server's tools\/list answer differs from the early one/)]);
    r.input.end();
    await r.done;
  });

  it('negotiates as the SDK does: a supported older version is kept, an unknown one gets the newest; channel mode is declared', async () => {
    for (const [asked, got] of [
      ['2025-06-18', '2025-06-18'],
      ['2099-01-01', '2025-11-25'],
    ] as const) {
      const r = rig({ channel: true });
      r.send(init(asked));
      r.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      await expect.poll(() => r.lines.length).toBe(2);
      expect(r.lines[0]).toMatchObject({ id: 1, result: { protocolVersion: got, capabilities: { experimental: { 'claude/channel': {} } } } });
      expect(r.warnings).toEqual([]);
      r.input.end();
      await r.done;
    }
  });

  it('answers a line that is not JSON with a parse error and keeps serving', async () => {
    const r = rig();
    r.send('this is not json');
    r.send(init('2025-11-25'));
    await expect.poll(() => r.lines.length).toBe(2);
    expect(r.lines[0]).toMatchObject({ id: null, error: { code: -32700 } });
    expect(r.lines[1]).toMatchObject({ id: 1, result: { protocolVersion: '2025-11-25' } });
    r.input.end();
    await r.done;
  });
});
