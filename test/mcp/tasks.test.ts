// The task store behind `ask` as a task (tools/mcp/tasks.ts): bounded in count, a finished
// task dropped after its ttl, and tasks/result woken by a change rather than a poll.

import { describe, expect, it } from 'vitest';
import { BoundedTaskStore, MAX_TTL_MS, taskResult } from '../../tools/mcp/tasks.js';
import { waitFor } from '../helpers/temp-bus.js';

const ok = (text: string) => ({ content: [{ type: 'text', text }] });

describe('BoundedTaskStore', () => {
  it('keeps a finished task for its ttl, then drops it; a working one stays', async () => {
    const store = new BoundedTaskStore();
    const done = await store.createTask({ ttl: 30 });
    const working = await store.createTask({ ttl: 30 });
    await store.storeTaskResult(done.taskId, 'completed', ok('yes'));
    expect((await store.getTask(done.taskId))?.status).toBe('completed');
    expect(await store.getTaskResult(done.taskId)).toEqual(ok('yes'));
    await waitFor(async () => (await store.getTask(done.taskId)) === null, { what: 'the finished task dropped after its ttl' });
    expect((await store.getTask(working.taskId))?.status).toBe('working');
    store.close();
  });

  it('clamps a ttl to a day and names a default when the client gives none', async () => {
    const store = new BoundedTaskStore();
    expect((await store.createTask({ ttl: 10 * MAX_TTL_MS })).ttl).toBe(MAX_TTL_MS);
    expect((await store.createTask({})).ttl).toBeGreaterThan(0);
    store.close();
  });

  it('when full, drops the finished task due first; refuses a new one while every task works', async () => {
    const store = new BoundedTaskStore(2);
    const a = await store.createTask({ ttl: 60_000 });
    const b = await store.createTask({ ttl: 60_000 });
    await store.storeTaskResult(a.taskId, 'completed', ok('a'));
    const c = await store.createTask({ ttl: 60_000 });
    expect(await store.getTask(a.taskId)).toBeNull();
    expect(store.size).toBe(2);
    await expect(store.createTask({ ttl: 60_000 })).rejects.toThrow(/2 tasks are already working/);
    expect((await store.listTasks()).tasks.map((t) => t.taskId)).toEqual([b.taskId, c.taskId]);
    store.close();
  });

  it('a result after a cancel changes nothing', async () => {
    const store = new BoundedTaskStore();
    const t = await store.createTask({});
    await store.updateTaskStatus(t.taskId, 'cancelled');
    await store.storeTaskResult(t.taskId, 'completed', ok('late'));
    expect((await store.getTask(t.taskId))?.status).toBe('cancelled');
    await expect(store.updateTaskStatus(t.taskId, 'working')).rejects.toThrow(/already cancelled/);
    store.close();
  });

  it('lists in pages of 100 with a cursor', async () => {
    const store = new BoundedTaskStore();
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push((await store.createTask({})).taskId);
    const first = await store.listTasks();
    expect(first.tasks).toHaveLength(100);
    const second = await store.listTasks(first.nextCursor);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.tasks, ...second.tasks].map((t) => t.taskId)).toEqual(ids);
    store.close();
  });
});

describe('taskResult (tasks/result)', () => {
  it('waits for the result, woken by the store, and ends on the request abort', async () => {
    const store = new BoundedTaskStore();
    const t = await store.createTask({});
    const r = taskResult(store, t.taskId, new AbortController().signal);
    await store.storeTaskResult(t.taskId, 'completed', ok('port 8080'));
    expect(await r).toMatchObject({ ...ok('port 8080'), _meta: { 'io.modelcontextprotocol/related-task': { taskId: t.taskId } } });

    const u = await store.createTask({});
    const abort = new AbortController();
    const waiting = taskResult(store, u.taskId, abort.signal);
    abort.abort();
    await expect(waiting).rejects.toThrow(/cancelled/);
    await expect(taskResult(store, 'nope', abort.signal)).rejects.toThrow(/not found/);
    store.close();
  });
});
