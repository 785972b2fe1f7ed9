// Every MCP tool in-process: a real SDK Client talks to createServer over the SDK's
// InMemoryTransport (issue #9 §7). The client validates each structuredContent against the
// tool's outputSchema, so a result that drifts from its declared shape fails here.
// Issue #11 §3-§6: corrections as isError results, typed results, honest annotations, bounded
// inbox pages, and the channel verbs the CLI has.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createContext } from '../../tools/cli/context.js';
import { createServer } from '../../tools/mcp/server.js';
import { parseSignal } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { type FakeSession, type TempBus, runBin, useFamilyPolicy, useTempBus } from '../helpers/bus.js';
import { ids, put } from '../helpers/delivery.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
let me: FakeSession;
let peer: FakeSession;
let client: Client;

async function connect(s: FakeSession): Promise<Client> {
  const server = createServer({
    makeCtx: () => createContext({ env: s.env, cwd: s.cwd, stdout: { write: () => true }, stderr: { write: () => true } }),
    version: '0.0.0-test',
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const c = new Client({ name: 'attend-in-process', version: '0.0.0' });
  await c.connect(clientSide);
  return c;
}

beforeEach(async () => {
  me = session({ name: 'mcp-me' });
  peer = session({ name: 'the-peer' });
  client = await connect(me);
});
afterEach(async () => {
  await client.close();
});

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A successful call: structuredContent, and the text form says the same. */
async function ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = await call(name, args);
  const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  expect(r.isError ?? false, text).toBe(false);
  expect(r.structuredContent).toBeDefined();
  expect(JSON.parse(text)).toEqual(r.structuredContent);
  return r.structuredContent as T;
}

/** A correctable failure: a tool result with isError and one clear line, never a JSON-RPC error. */
async function fails(name: string, args: unknown): Promise<string> {
  const r = (await client.request({ method: 'tools/call', params: { name, arguments: args } } as never, CallToolResultSchema)) as CallToolResult;
  expect(r.isError, JSON.stringify(r)).toBe(true);
  expect(r.content).toHaveLength(1);
  const text = (r.content[0] as { text: string }).text;
  expect(text).toMatch(/^attend: /);
  expect(text).not.toContain('\n');
  return text;
}

function signalsIn(dir: string) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.signal'))
    .map((f) => ({ id: f.slice(0, -'.signal'.length), env: parseSignal(readFileSync(join(dir, f), 'utf8').trimEnd())! }));
}

const READ_TOOLS = ['channels', 'claims', 'inbox', 'peers', 'read', 'search', 'status', 'whoami'];
const WRITE_TOOLS = ['ask', 'claim', 'create', 'describe', 'dissolve', 'focus', 'invite', 'join', 'kick', 'leave', 'release', 'reply', 'send'];

describe('attend mcp tools (in-process)', () => {
  it('lists every verb with an object outputSchema, a title and honest annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
    const by = new Map<string, Tool>(tools.map((t) => [t.name, t]));
    for (const t of tools) {
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.title, t.name).toBeTruthy();
      expect(t.annotations?.openWorldHint, t.name).toBe(false);
      const props = Object.keys(t.inputSchema.properties ?? {});
      expect(props).not.toContain('from_kind');
      expect(props).not.toContain('from_id');
    }
    for (const n of READ_TOOLS) expect(by.get(n)?.annotations, n).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    for (const n of WRITE_TOOLS) expect(by.get(n)?.annotations?.readOnlyHint, n).toBe(false);
    // Only dissolve loses messages; a send or reply writes a new message every time.
    for (const n of WRITE_TOOLS) expect(by.get(n)?.annotations?.destructiveHint, n).toBe(n === 'dissolve');
    const idempotent = Object.fromEntries(WRITE_TOOLS.map((n) => [n, by.get(n)?.annotations?.idempotentHint]));
    expect(idempotent).toEqual({ ask: false, claim: false, release: true, create: true, describe: true, dissolve: true, focus: true, invite: false, join: true, kick: true, leave: true, reply: false, send: false });
    // The channel rules are in the schema, and `to` says it is a list.
    const channel = (by.get('join')!.inputSchema.properties as Record<string, { pattern: string; description: string }>).channel!;
    expect(channel.pattern).toBe('^#?[A-Za-z0-9_.-]{1,64}$');
    expect(channel.description).toMatch(/1 to 64 characters/);
    const to = (by.get('send')!.inputSchema.properties as Record<string, { type: string; description: string }>).to!;
    expect(to.type).toBe('array');
    expect(to.description).toMatch(/a list of recipients/);
    const message = (by.get('send')!.inputSchema.properties as Record<string, { maxLength: number; minLength: number }>).message;
    expect(message).toMatchObject({ minLength: 1, maxLength: 65536 });
  });

  it('whoami and status are the session that owns the server', async () => {
    expect(await ok('whoami')).toMatchObject({ id: me.sessionId, kind: 'agent', displayName: 'mcp-me', resolved: true });
    const st = await ok<{ me: { id: string }; inbox: { total: number }; busRoot: string }>('status');
    expect(st).toMatchObject({ me: { id: me.sessionId }, inbox: { total: 0 }, busRoot: bus.root });
  });

  it('send writes an envelope with the resolved identity and resolves a display name; reply threads back', async () => {
    const open = await ok<{ id: string; to: string }>('send', { message: 'hello #open' });
    expect(signalsIn(join(bus.root, 'signals', '_broadcast'))).toEqual([{ id: open.id, env: expect.objectContaining({ fromKind: 'agent', fromId: me.sessionId, to: '*', body: 'hello #open' }) }]);
    const direct = await ok<{ id: string; to: string }>('send', { message: 'just you', to: ['the-peer'], on_behalf_of: 'tester' });
    expect(direct.to).toBe(peer.sessionId);
    expect(signalsIn(join(bus.root, 'signals', attendKey(peer.cwd)))).toEqual([
      { id: direct.id, env: expect.objectContaining({ fromId: me.sessionId, to: peer.sessionId, onBehalfOf: 'tester', body: 'just you' }) },
    ]);
    const sent = runBin(['send', '--to', me.sessionId, 'ping from the peer'], { env: peer.env, cwd: peer.cwd });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const pingId = sent.stdout.trim();
    const inbox = await ok<{ messages: { id: string }[] }>('inbox');
    expect(inbox.messages[0]?.id).toBe(pingId);
    expect(await ok('reply', { message: 'pong' })).toMatchObject({ re: pingId, to: peer.sessionId });
  });

  it('inbox pages previews of at most 300 characters; read returns the whole message', async () => {
    const mk = ids();
    const tray = { kind: 'tray', key: attendKey(me.cwd) } as const;
    const big = `${'é'.repeat(200)}${'x'.repeat(64 * 1024 - 500)}`;
    const bigId = put(bus.root, mk, { scope: tray, to: me.sessionId, body: big });
    for (let i = 0; i < 24; i++) put(bus.root, mk, { scope: tray, to: me.sessionId, body: `short ${i}` });
    const r = await call('inbox', {});
    const page1 = r.structuredContent as { messages: { id: string; preview: string; chars: number; truncated: boolean }[]; total: number; pages: number; limit: number; next: number | null };
    expect(page1).toMatchObject({ total: 25, limit: 10, pages: 3, next: 2 });
    expect(page1.messages).toHaveLength(10);
    const page3 = await ok<typeof page1>('inbox', { page: 3 });
    expect(page3.next).toBeNull();
    const preview = page3.messages.find((m) => m.id === bigId)!;
    expect(preview).toMatchObject({ chars: Array.from(big).length, truncated: true });
    expect(preview.preview).toBe(Array.from(big).slice(0, 300).join(''));
    expect(page3.messages.find((m) => m.id !== bigId)).toMatchObject({ truncated: false });
    // A page holding a 64 KiB message stays small: previews, not bodies.
    const page3Bytes = JSON.stringify((await call('inbox', { page: 3 })).content).length;
    expect(page3Bytes).toBeLessThan(16_000);
    const full = await ok<{ message: { body: string } }>('read', { id: bigId });
    expect(full.message.body).toBe(big);
  });

  it('read with thread returns the message and its thread, oldest first', async () => {
    useFamilyPolicy(bus); // threads, not permissions: tam is an agent with no lineage
    const mk = ids();
    const rootId = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'question' });
    const answer = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'answer', re: rootId, fromKind: 'agent', fromId: 'tam' });
    const r = await ok<{ message: { id: string }; thread: { id: string }[] }>('read', { id: answer, thread: true });
    expect(r.message.id).toBe(answer);
    expect(r.thread.map((m) => m.id)).toEqual([rootId, answer]);
  });

  it('channel verbs: create, describe, join, invite, kick, channels, leave and dissolve, as the CLI does them', async () => {
    expect(await ok('create', { channel: '#ops', description: 'deploys' })).toEqual({ channel: 'ops', description: 'deploys', pinned: true });
    expect(await ok('describe', { channel: 'ops' })).toEqual({ channel: 'ops', description: 'deploys', changed: false });
    // The verbs' rules hold here as in the CLI: only members change a channel, and the hint
    // names the tool to call.
    expect(await fails('describe', { channel: 'ops', text: 'x' })).toMatch(/only members of #ops can describe it \(the join tool with \{"channel":"ops"\}\)/);
    expect(await ok('join', { channel: 'ops' })).toMatchObject({ channel: 'ops', joined: true, created: false, alreadyMember: false });
    expect(await ok('join', { channel: 'ops' })).toMatchObject({ alreadyMember: true });
    expect(await ok('describe', { channel: 'ops', text: 'deploys and rollbacks' })).toEqual({ channel: 'ops', description: 'deploys and rollbacks', changed: true });
    const inv = await ok<{ invitee: { id: string }; notice: string | null }>('invite', { who: 'the-peer', channel: 'ops' });
    expect(inv.invitee.id).toBe(peer.sessionId);
    expect(inv.notice).toMatch(/^[A-Za-z0-9_-]+$/);
    const joined = runBin(['join', 'ops'], { env: peer.env, cwd: peer.cwd });
    expect(joined.exitCode, joined.stderr).toBe(0);
    const list = await ok<{ channels: { label: string; members: { id: string }[] }[] }>('channels', { joined: true });
    expect(list.channels.map((c) => c.label)).toEqual(['#open', '#ops']);
    expect(list.channels[1]!.members.map((m) => m.id).sort()).toEqual([me.sessionId, peer.sessionId].sort());
    const sent = await ok<{ id: string; to: string }>('send', { message: 'deploying', channel: 'ops' });
    expect(sent.to).toBe('#ops');
    expect(await ok('kick', { who: 'the-peer', channel: 'ops' })).toMatchObject({ channel: 'ops', kicked: { id: peer.sessionId } });
    expect(await fails('kick', { who: 'the-peer', channel: 'ops' })).toMatch(/is not a member of #ops/);
    expect(await ok('leave', { channel: 'ops' })).toEqual({ channel: 'ops', left: true, removed: false });
    expect(await fails('leave', { channel: 'ops' })).toMatch(/you are not a member of #ops/);
    expect(await ok('join', { channel: 'ops' })).toMatchObject({ joined: true });
    expect(await ok('dissolve', { channel: 'ops' })).toMatchObject({ channel: 'ops', removedMessages: 1 });
    expect(existsSync(join(bus.root, 'signals', '@ops'))).toBe(false);
    expect(await fails('describe', { channel: 'ops' })).toMatch(/#ops/);
  });

  it('claim, claims and release: the same claims the CLI makes (issue 23 §2)', async () => {
    const file = join(me.cwd, 'parser.ts');
    const made = await ok<{ claims: { pattern: string; holder: { id: string }; reason: string; mine: boolean }[] }>('claim', { paths: [file], reason: 'rewriting it', ttl: '30m' });
    expect(made.claims).toMatchObject([{ pattern: file.slice(1), holder: { id: me.sessionId }, reason: 'rewriting it', mine: true }]);
    const other = await connect(peer);
    try {
      const checked = (await other.callTool({ name: 'claims', arguments: { check: file } })) as CallToolResult;
      expect(checked.structuredContent).toMatchObject({ held: true, claims: [{ holder: { id: me.sessionId, name: 'mcp-me' }, mine: false }] });
      const refused = (await other.callTool({ name: 'claim', arguments: { paths: [file] } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/mcp-me .* holds .*nothing was claimed/);
      const peers = (await other.callTool({ name: 'peers', arguments: {} })) as CallToolResult;
      expect((peers.structuredContent as { peers: { id: string; holds: string[] }[] }).peers.find((p) => p.id === me.sessionId)?.holds).toEqual([file.slice(1)]);
    } finally {
      await other.close();
    }
    expect(await ok('release', {})).toMatchObject({ released: [{ pattern: file.slice(1) }] });
    expect(await ok('claims', {})).toEqual({ claims: [] });
  });

  it('dissolve is refused while another live member is in, unless force', async () => {
    await ok('join', { channel: 'team' });
    expect(runBin(['join', 'team'], { env: peer.env, cwd: peer.cwd }).exitCode).toBe(0);
    expect(await fails('dissolve', { channel: 'team' })).toMatch(/has live members besides you: the-peer/);
    expect(await ok('dissolve', { channel: 'team', force: true })).toMatchObject({ notified: [peer.sessionId] });
  });

  it('every correctable failure is an isError result with a clear message, and writes nothing', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['send', {}, /^attend: invalid arguments for send: message: required \(string\)$/],
      ['send', { message: 42 }, /message: .*string/i],
      ['send', { message: '' }, /message: the message is empty/],
      ['send', { message: '   ' }, /the message is empty/],
      ['send', { message: 'x'.repeat(64 * 1024 + 1) }, /over the limit of 65536 bytes/],
      // Under the character limit but over the byte limit: the verb's own check.
      ['send', { message: 'é'.repeat(40_000) }, /80000 bytes; the limit is 65536/],
      ['send', { message: 'forged', from_id: 'someone-else' }, /unknown argument 'from_id'/],
      ['send', { message: 'x', to: 'the-peer' }, /to: .*array/i],
      ['send', { message: 'x', channel: 'no way|bad' }, /channel: a channel name is 1 to 64/],
      ['send', { message: 'x', channel: 'a'.repeat(65) }, /channel: a channel name is 1 to 64/],
      ['send', { message: 'x', to: ['Nobody-here'] }, /no known recipient 'Nobody-here'/],
      ['send', null, /^attend: invalid arguments for send: message: required \(string\)$/],
      ['send', [], /arguments must be an object/],
      ['inbox', { limit: 0 }, /limit: /],
      ['inbox', { limit: 51 }, /limit: /],
      ['join', {}, /channel: required/],
      ['read', { id: 'zzzz0000-00000000' }, /not found/],
      ['create', { channel: 'x', description: 'two\nlines' }, /one printable line/],
      ['no-such-tool', {}, /unknown tool 'no-such-tool'; tools: send, reply/],
    ];
    for (const [name, args, re] of cases) {
      const msg = await fails(name, args);
      if (process.env.SHOW) console.log(msg.slice(0, 300));
      expect(msg, `${name} ${JSON.stringify(args)?.slice(0, 80)}`).toMatch(re);
    }
    expect(existsSync(join(bus.root, 'signals'))).toBe(false);
  });
});
