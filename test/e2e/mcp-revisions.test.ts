// Both MCP revisions on one `attend mcp`: a 2026-07-28 client is served statelessly (per-request
// `_meta`, `server/discover`, `subscriptions/listen`), checked here by a raw JSON-RPC client
// written from the specification (schema/2026-07-28, basic/patterns/subscriptions,
// basic/versioning), not by an SDK. The 2025-11-25 session Claude Code opens, channel push
// included, is the SDK client's in mcp-server.test.ts and mcp-channel.test.ts; here the raw
// client checks the same process still answers `initialize` after stateless requests.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, type FakeSession, type TempBus, fakeSession, makeTempBus, runBin } from '../helpers/bus.js';
import { type WireClient, type WireMessage, spawnWire } from '../helpers/mcp-wire.js';

const MODERN = '2026-07-28';
const INBOX = 'attend://inbox';
const SUB = 'io.modelcontextprotocol/subscriptionId';

const envelope = (version = MODERN, caps: unknown = {}) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-spec-client', version: '0.0.0' },
  ...(caps === null ? {} : { 'io.modelcontextprotocol/clientCapabilities': caps }),
});

let bus: TempBus;
let me: FakeSession;
let wire: WireClient | undefined;

beforeEach(() => {
  bus = makeTempBus();
  me = fakeSession(bus, { name: 'modern-me' });
});
afterEach(async () => {
  await wire?.close();
  wire = undefined;
  me.kill();
  bus.cleanup();
});

function open(args: string[] = []): WireClient {
  wire = spawnWire(process.execPath, [BIN, 'mcp', ...args], { env: me.env, cwd: me.cwd });
  return wire;
}

/** The subscription a notification names in its `_meta`. */
const subOf = (m: WireMessage): unknown => (m.params?._meta as Record<string, unknown> | undefined)?.[SUB];

function structured(r: WireMessage): Record<string, unknown> {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.result?.resultType).toBe('complete');
  expect(r.result?.isError ?? false, JSON.stringify(r.result?.content)).toBe(false);
  return r.result?.structuredContent as Record<string, unknown>;
}

describe('attend mcp, protocol revision 2026-07-28 (stateless)', () => {
  it('discovers, lists and calls the tools with no initialize, and names the supported revisions for one it does not serve', async () => {
    const c = open(['--channel']);
    const d = await c.request('server/discover', { _meta: envelope() });
    expect(d.result).toMatchObject({ resultType: 'complete', cacheScope: 'public', capabilities: { tools: {}, resources: { subscribe: true } } });
    expect(d.result?.supportedVersions).toEqual(expect.arrayContaining([MODERN, '2025-11-25']));
    expect(d.result?._meta).toMatchObject({ 'io.modelcontextprotocol/serverInfo': { name: 'attend' } });
    expect(typeof d.result?.ttlMs).toBe('number');
    // The channel push is the 2025-11-25 session's; it is not offered statelessly.
    expect((d.result?.capabilities as Record<string, unknown>).experimental).toBeUndefined();

    const list = await c.request('tools/list', { _meta: envelope() });
    expect(list.result).toMatchObject({ resultType: 'complete', cacheScope: 'public' });
    const names = (list.result?.tools as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['send', 'inbox', 'read', 'whoami', 'ask']));
    // Tasks are the 2025-11-25 session's (no tasks capability here): no tool offers them.
    expect((d.result?.capabilities as Record<string, unknown>).tasks).toBeUndefined();
    expect((list.result?.tools as { execution?: unknown }[]).filter((t) => t.execution !== undefined)).toEqual([]);

    // send, then inbox: the same tools, the same results.
    const sent = structured(await c.request('tools/call', { _meta: envelope(), name: 'send', arguments: { message: 'hello from the stateless revision' } }));
    const inbox = structured(await c.request('tools/call', { _meta: envelope(), name: 'inbox', arguments: {} }));
    expect((inbox.messages as { id: string }[]).map((m) => m.id)).toContain(sent.id);
    // A correction is still a tool result the model reads.
    const bad = await c.request('tools/call', { _meta: envelope(), name: 'send', arguments: { message: '' } });
    expect(bad.result).toMatchObject({ resultType: 'complete', isError: true });

    // A revision not served per request: the spec's UnsupportedProtocolVersionError.
    const old = await c.request('tools/list', { _meta: envelope('1900-01-01') });
    expect(old.error).toMatchObject({ code: -32022, data: { requested: '1900-01-01' } });
    expect(old.error?.data?.supported).toEqual(expect.arrayContaining([MODERN, '2025-11-25']));
    // A handshake revision named per request: the same error, saying where it is served.
    const legacyClaim = await c.request('tools/list', { _meta: envelope('2025-11-25') });
    expect(legacyClaim.error).toMatchObject({ code: -32022, data: { requested: '2025-11-25' } });
    expect(legacyClaim.error?.message).toContain('initialize');
    // A required field missing: Invalid params. A method this revision removed: Method not found.
    expect((await c.request('tools/list', { _meta: envelope(MODERN, null) })).error?.code).toBe(-32602);
    expect((await c.request('ping', { _meta: envelope() })).error?.code).toBe(-32601);

    // The same process still opens a 2025-11-25 session for a client that asks for one.
    const init = await c.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-legacy', version: '0.0.0' } });
    expect(init.result).toMatchObject({ protocolVersion: '2025-11-25', capabilities: { experimental: { 'claude/channel': {} } } });
  });

  it('subscriptions/listen: acknowledged, then notifications/resources/updated for attend://inbox when a message arrives, nothing consumed; a cancel ends it', async () => {
    const c = open();
    c.write({ jsonrpc: '2.0', id: 'sub-1', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { resourceSubscriptions: [INBOX, 'file:///elsewhere'], toolsListChanged: true } } });
    const ack = await c.next((m) => m.method === 'notifications/subscriptions/acknowledged' && subOf(m) === 'sub-1', 'the acknowledgment');
    // Only what is honoured: the inbox resource (the tool list never changes).
    expect(ack.params?.notifications).toEqual({ resourceSubscriptions: [INBOX] });

    const first = runBin(['send', '--to', me.sessionId, 'arrives while listening'], { env: bus.env }).stdout.trim();
    const updated = (sub: string) => (m: WireMessage) => m.method === 'notifications/resources/updated' && m.params?.uri === INBOX && subOf(m) === sub;
    await c.next(updated('sub-1'), 'the update for sub-1');
    const read = await c.request('resources/read', { _meta: envelope(), uri: INBOX });
    const page = JSON.parse((read.result?.contents as { text: string }[])[0]!.text) as { messages: { id: string }[] };
    expect(page.messages.map((m) => m.id)).toContain(first);
    // Listening consumed nothing: the Stop hook's drain still delivers it.
    expect(runBin(['inbox', '--drain', '--format', 'plain'], { env: me.env, cwd: me.cwd }).stdout).toContain('arrives while listening');

    // Cancelled (a plain notifications/cancelled on stdio): nothing more for sub-1.
    c.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'sub-1' } });
    c.write({ jsonrpc: '2.0', id: 'sub-2', method: 'subscriptions/listen', params: { _meta: envelope(), notifications: { resourceSubscriptions: [INBOX] } } });
    await c.next((m) => m.method === 'notifications/subscriptions/acknowledged' && subOf(m) === 'sub-2', 'the second acknowledgment');
    const seen = c.received.length;
    runBin(['send', '--to', me.sessionId, 'after the cancel'], { env: bus.env });
    await c.next((m) => c.received.indexOf(m) >= seen && updated('sub-2')(m), 'the update for sub-2');
    expect(c.received.slice(seen).filter(updated('sub-1'))).toEqual([]);

    // Shutdown ends the open subscription gracefully: its result, tagged with its id.
    expect(await c.close()).toBe(0);
    expect(c.received.find((m) => m.id === 'sub-2' && 'result' in m)?.result).toEqual({ resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'attend' }), [SUB]: 'sub-2' } });
    expect(c.received.find((m) => m.id === 'sub-1')).toBeUndefined();
  });
});
