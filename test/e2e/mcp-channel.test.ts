// `attend mcp --channel`: inbound messages pushed as notifications/claude/channel through the
// same consumption ledger the sensor and the Stop-hook drain use, so nothing is surfaced twice.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, ME, type FakeSession, type TempBus, fakeSession, makeTempBus, runBin, waitFor } from '../helpers/bus.js';

interface Notice {
  method: string;
  params?: { content?: string; meta?: Record<string, string> };
}

let bus: TempBus;
let me: FakeSession;
let clients: Client[] = [];

async function connect(args: string[]): Promise<{ client: Client; notices: Notice[] }> {
  const client = new Client({ name: 'attend-channel-test', version: '0.0.0' });
  const notices: Notice[] = [];
  client.fallbackNotificationHandler = async (n) => {
    notices.push(n as Notice);
  };
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], env: me.env, cwd: me.cwd, stderr: 'pipe' }));
  clients.push(client);
  return { client, notices };
}

function sendToMe(body: string): string {
  const r = runBin(['send', '--to', me.sessionId, body], { env: bus.env });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
}

function pushed(notices: Notice[], id: string): Notice | undefined {
  return notices.find((n) => n.method === 'notifications/claude/channel' && n.params?.meta?.id === id);
}

beforeEach(() => {
  bus = makeTempBus();
  me = fakeSession(bus, { name: 'listener' });
});
afterEach(async () => {
  for (const c of clients) await c.close();
  clients = [];
  me.kill();
  bus.cleanup();
});

describe('attend mcp --channel', () => {
  it('declares claude/channel only when asked', async () => {
    const plain = await connect([]);
    expect(plain.client.getServerCapabilities()?.experimental?.['claude/channel']).toBeUndefined();
    const channel = await connect(['--channel']);
    expect(channel.client.getServerCapabilities()?.experimental?.['claude/channel']).toEqual({});
  });

  it('pushes a message addressed to the session, with its header and metadata, once', async () => {
    const { notices } = await connect(['--channel']);
    const id = sendToMe('pushed over the channel');
    const n = await waitFor(() => pushed(notices, id), { timeoutMs: 15_000, what: 'the channel notification' });
    expect(n.params?.content).toContain(`[attend message from_kind=human from=${ME} sig=ok to=${me.sessionId} id=${id}]`);
    expect(n.params?.content).toContain('pushed over the channel');
    expect(n.params?.meta).toMatchObject({ source: 'attend', id, from_kind: 'human', from_id: ME, to: me.sessionId });
    // The same ledger: the Stop hook has nothing left to deliver.
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: me.env, cwd: me.cwd });
    expect(drain.exitCode).toBe(0);
    expect(drain.stdout).not.toContain('pushed over the channel');
    // A later message is pushed; the first is not pushed again.
    const later = sendToMe('second one');
    await waitFor(() => pushed(notices, later), { timeoutMs: 15_000, what: 'the second notification' });
    expect(notices.filter((x) => x.params?.meta?.id === id)).toHaveLength(1);
  });

  it('does not push what the Stop hook already delivered', async () => {
    // Start the ledger with the drain, deliver one message through it, then start the channel.
    runBin(['inbox', '--drain', '--format', 'plain'], { env: me.env, cwd: me.cwd });
    const drained = sendToMe('taken by the drain');
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: me.env, cwd: me.cwd });
    expect(drain.stdout).toContain('taken by the drain');
    const { notices } = await connect(['--channel']);
    const fresh = sendToMe('for the channel');
    await waitFor(() => pushed(notices, fresh), { timeoutMs: 15_000, what: 'the channel notification' });
    expect(pushed(notices, drained)).toBeUndefined();
    expect(notices.map((n) => n.params?.content ?? '').join('\n')).not.toContain('taken by the drain');
  });

  it('without --channel, nothing is pushed and the drain still delivers', async () => {
    const { client, notices } = await connect([]);
    const id = sendToMe('left for the drain');
    // A tool call round trip after the send: a push would have had its chance by then.
    await client.callTool({ name: 'whoami', arguments: {} });
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: me.env, cwd: me.cwd });
    expect(drain.stdout).toContain('left for the drain');
    expect(pushed(notices, id)).toBeUndefined();
  });

  it('after /clear the push follows the same hand-over as the sensor and the drain: nothing recent is pushed again', async () => {
    const { notices } = await connect(['--channel']);
    const before = runBin(['send', 'broadcast before the clear'], { env: bus.env });
    const a = before.stdout.trim();
    await waitFor(() => pushed(notices, a), { timeoutMs: 15_000, what: 'the first push' });
    // /clear: the same Claude process, a new session id in its record; the server's env
    // still names the old one.
    const recPath = join(bus.claudeDir, 'sessions', `${me.pid}.json`);
    const rec = JSON.parse(readFileSync(recPath, 'utf8')) as Record<string, unknown>;
    const newId = '00000000-0000-4000-8000-0000000c1ea2';
    writeFileSync(recPath, JSON.stringify({ ...rec, sessionId: newId }));
    const b = runBin(['send', '--to', newId, 'to the new id'], { env: bus.env }).stdout.trim();
    await waitFor(() => pushed(notices, b), { timeoutMs: 15_000, what: 'the push to the new id' });
    // A is younger than the cold-start window: a cold start on the new id would push it again.
    expect(notices.filter((n) => n.params?.meta?.id === a)).toHaveLength(1);
    expect(existsSync(join(bus.root, 'state', 'ledger', newId, 'ledger.jsonl'))).toBe(true);
    expect(existsSync(join(bus.root, 'state', 'ledger', me.sessionId, 'ledger.jsonl'))).toBe(false);
  });
});
