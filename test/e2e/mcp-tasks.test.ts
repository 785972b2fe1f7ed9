// Issue 23 §1 in MCP, the wait a request timeout does not cut: `ask` called as a task (MCP
// 2025-11-25 Tasks) over a real stdio client (the SDK's Client spawning the built `attend
// mcp`). The call answers with a task at once, under a request timeout far shorter than the
// wait; the reply another process writes ends the task, and tasks/result returns it.
// tasks/cancel ends a waiting task and leaves the message sent. A call without `task` is the
// plain one, with progress.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSession, runBin, useTempBus, waitFor } from '../helpers/bus.js';
import { connectMcp } from '../helpers/mcp-client.js';

const session = useTempBus(() => {});
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

const connect = (s: FakeSession) => connectMcp(s, { name: 'attend-tasks-test' });

/** The id of the message with this body in a session's inbox, once it is there. */
function inboxed(s: FakeSession, body: string): Promise<string> {
  return waitFor(
    () => {
      const r = runBin(['inbox', '--json'], { env: s.env, cwd: s.cwd });
      return (JSON.parse(r.stdout) as { messages: { id: string; body: string }[] }).messages.find((m) => m.body === body)?.id;
    },
    { what: `"${body}" in the inbox`, intervalMs: 200 },
  );
}

/** `ask` as a task, under a request timeout much shorter than the wait. */
function askAsTask(c: Client, args: Record<string, unknown>, onprogress?: (p: Progress) => void) {
  return c.request({ method: 'tools/call', params: { name: 'ask', arguments: args } }, CreateTaskResultSchema, { task: { ttl: 60_000 }, timeout: 3_000, ...(onprogress ? { onprogress } : {}) });
}

describe('the MCP ask tool as a task (issue 23 §1)', () => {
  it('answers with a task at once; tasks/result returns the reply another process writes', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    client = await connect(lead);
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } }, cancel: {}, list: {} });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'ask')?.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find((t) => t.name === 'send')?.execution).toBeUndefined();

    const progress: Progress[] = [];
    const created = await askAsTask(client, { message: 'which port?', to: ['api'], timeout_seconds: 120 }, (p) => progress.push(p));
    expect(created.task).toMatchObject({ status: 'working', ttl: 60_000 });
    const taskId = created.task.taskId;
    const id = await inboxed(api, 'which port?');
    // The request's progressToken stays live for the task: the send is reported after the task was answered.
    await waitFor(() => progress.some((p) => p.message === `sent ${id}; waiting`), { what: 'the sent progress notification of the task' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);

    // Waiting on tasks/result before the reply exists: the reply wakes it.
    const result = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 30_000 });
    const r = runBin(['reply', '--re', id, 'port 8080'], { env: api.env, cwd: api.cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const answer = (await result) as CallToolResult;
    expect(answer.isError ?? false, JSON.stringify(answer.content)).toBe(false);
    expect(answer.structuredContent).toMatchObject({ id, wait: { mode: 'reply', reply: { body: 'port 8080', re: id, fromId: api.sessionId } } });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  });

  it('tasks/cancel ends a waiting task; the message stays sent and a later reply changes nothing', async () => {
    const lead = session({ name: 'lead' });
    const api = session({ name: 'api' });
    client = await connect(lead);
    const created = await askAsTask(client, { message: 'still there?', to: ['api'], timeout_seconds: 120 });
    const taskId = created.task.taskId;
    const id = await inboxed(api, 'still there?');
    // The expectation is attached at once: the result can be refused while the cancel is awaited.
    const refused = expect(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 30_000 })).rejects.toThrow(/was cancelled/);
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    await refused;
    expect(await inboxed(api, 'still there?')).toBe(id);
    expect(runBin(['reply', '--re', id, 'yes'], { env: api.env, cwd: api.cwd }).exitCode).toBe(0);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/terminal status: cancelled/);
  });

  it('an ask with bad arguments is a failed task whose result says why; a tool that answers at once is not a task', async () => {
    const lead = session({ name: 'lead' });
    client = await connect(lead);
    const created = await askAsTask(client, { message: '' });
    const result = (await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^attend: invalid arguments for ask: message: /) }]);
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('failed');
    const err = await client.request({ method: 'tools/call', params: { name: 'send', arguments: { message: 'hi' } } }, CreateTaskResultSchema, { task: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32601);
    await expect(client.experimental.tasks.getTask('no-such-task')).rejects.toThrow(/not found/i);
  });
});
