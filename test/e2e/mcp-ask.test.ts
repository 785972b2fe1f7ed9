// Issue 23 §1 in MCP: the `ask` tool over a real stdio client (the SDK's Client spawning the
// built `attend mcp`). With a progressToken the wait reports progress (sent, shown) and the
// client, resetting its request timeout on progress, keeps waiting; the result is the reply
// another session wrote. A timeout is an error result that says who was not shown it.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSession, runBin, useTempBus, waitFor } from '../helpers/bus.js';
import { connectMcp } from '../helpers/mcp-client.js';

const session = useTempBus(() => {});
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

const connect = (s: FakeSession) => connectMcp(s, { name: 'attend-ask-test' });

/** `ask` called with a progress token; resolves `sent` with the question's id once the "sent" notification came. */
async function askWithProgress(c: Client, args: Record<string, unknown>) {
  const progress: Progress[] = [];
  const call = c.callTool({ name: 'ask', arguments: args }, undefined, {
    onprogress: (p) => progress.push(p),
    resetTimeoutOnProgress: true,
    timeout: 30_000,
  }) as Promise<CallToolResult>;
  const sent = await waitFor(() => progress.find((p) => /^sent \S+; waiting$/.test(p.message ?? '')), { what: 'the sent progress notification' });
  return { call, progress, id: /^sent (\S+);/.exec(sent.message!)![1]! };
}

describe('the MCP ask tool (issue 23 §1)', () => {
  it('reports progress while it waits and returns the reply another session writes', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    client = await connect(lead);
    const { call, progress, id } = await askWithProgress(client, { message: 'which port?', to: ['api'], timeout_seconds: 60 });
    const r = runBin(['reply', '--re', id, 'port 8080'], { env: api.env, cwd: api.cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const result = await call;
    expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
    expect(result.structuredContent).toMatchObject({ id, wait: { mode: 'reply', reply: { body: 'port 8080', re: id, fromId: api.sessionId } } });
    // Progress counts up, as the protocol asks.
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    // A call without a task field is the plain call, though the server offers tasks: none made.
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
  });

  it('takes urgency: the question is sent urgent, and the reply ends the wait', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    client = await connect(lead);
    const { call, id } = await askWithProgress(client, { message: 'stop the deploy?', to: ['api'], urgency: 'urgent', timeout_seconds: 60 });
    const inbox = JSON.parse(runBin(['inbox', '--json'], { env: api.env, cwd: api.cwd }).stdout) as { messages: { id: string; urgency: string | null }[] };
    expect(inbox.messages.find((m) => m.id === id)?.urgency).toBe('urgent');
    expect(runBin(['reply', '--re', id, 'stopped'], { env: api.env, cwd: api.cwd }).exitCode).toBe(0);
    const result = await call;
    expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
    expect(result.structuredContent).toMatchObject({ id, wait: { mode: 'reply', reply: { body: 'stopped', re: id } } });
  });

  it('a timeout is an error result naming who was not shown it', async () => {
    const lead = session({ name: 'lead' });
    session({ name: 'api' });
    client = await connect(lead);
    const result = (await client.callTool({ name: 'ask', arguments: { message: 'anyone?', to: ['api'], timeout_seconds: 1 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^attend: no reply to \S+ within 1s: shown to nobody yet; not shown to api \(the message stays; attend inbox --thread \S+ shows any later answer\)$/) }]);
  });
});
