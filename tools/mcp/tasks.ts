// Task-augmented `ask` (MCP 2025-11-25, "Tasks"; issue 23 §1): a client that sends
// `tools/call` with a `task` field gets a task at once and the wait goes on in the server,
// out of reach of the client's request timeout; the client polls `tasks/get`, waits on
// `tasks/result`, may `tasks/cancel` or `tasks/list`. The SDK's Protocol serves those methods
// over the TaskStore handed to it; this is that store, bounded, plus an event-driven
// `tasks/result` (the SDK's own re-reads the store every pollInterval while a task works).
//
// Bounds: at most MAX_TASKS tasks are kept; a finished task (its result) is kept for its ttl
// (the client's, clamped to MAX_TTL_MS; DEFAULT_TTL_MS when it names none), then dropped. A
// working task is kept while it works: its wait ends by ask's own timeout (at most a day).
// When the store is full, the finished task that would be dropped first goes; if every task
// still works, a new one is refused.

import { randomBytes } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';

export const MAX_TASKS = 1000;
export const DEFAULT_TTL_MS = 10 * 60_000;
export const MAX_TTL_MS = 24 * 60 * 60_000;
/** The poll interval a client is told (a client that waits on tasks/result never needs it). */
export const POLL_INTERVAL_MS = 5_000;
const PAGE = 100;

const terminal = (s: Task['status']) => s === 'completed' || s === 'failed' || s === 'cancelled';

interface Entry {
  task: Task;
  result?: Result;
  /** When a finished task is dropped (ms since epoch); undefined while it works. */
  dropAt?: number;
  timer?: NodeJS.Timeout;
  listeners: Set<() => void>;
}

export class BoundedTaskStore implements TaskStore {
  private readonly tasks = new Map<string, Entry>();

  constructor(private readonly max = MAX_TASKS) {}

  async createTask(params: CreateTaskOptions): Promise<Task> {
    if (this.tasks.size >= this.max) this.dropOneFinished();
    if (this.tasks.size >= this.max) throw new McpError(ErrorCode.InvalidRequest, `attend: ${this.max} tasks are already working; wait for one to end or cancel one`);
    const ttl = Math.min(Math.max(typeof params.ttl === 'number' && Number.isFinite(params.ttl) ? Math.floor(params.ttl) : DEFAULT_TTL_MS, 1), MAX_TTL_MS);
    const now = new Date().toISOString();
    const task: Task = { taskId: randomBytes(16).toString('hex'), status: 'working', ttl, createdAt: now, lastUpdatedAt: now, pollInterval: POLL_INTERVAL_MS };
    this.tasks.set(task.taskId, { task, listeners: new Set() });
    return { ...task };
  }

  async getTask(taskId: string): Promise<Task | null> {
    return this.peek(taskId);
  }

  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result): Promise<void> {
    const e = this.tasks.get(taskId);
    // A task cancelled (or dropped) meanwhile keeps its state: the late result goes nowhere.
    if (!e || terminal(e.task.status)) return;
    e.result = result;
    this.finish(e, status);
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const e = this.tasks.get(taskId);
    if (!e) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    if (!e.result) throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} has no result (${e.task.status})`);
    return e.result;
  }

  async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string): Promise<void> {
    const e = this.tasks.get(taskId);
    if (!e) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    if (terminal(e.task.status)) throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} is already ${e.task.status}`);
    if (statusMessage !== undefined) e.task.statusMessage = statusMessage;
    if (terminal(status)) this.finish(e, status);
    else {
      e.task.status = status;
      e.task.lastUpdatedAt = new Date().toISOString();
      this.changed(e);
    }
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const ids = [...this.tasks.keys()];
    let from = 0;
    if (cursor !== undefined) {
      const at = ids.indexOf(cursor);
      if (at < 0) throw new Error(`unknown cursor ${cursor}`);
      from = at + 1;
    }
    const page = ids.slice(from, from + PAGE);
    const tasks = page.map((id) => ({ ...this.tasks.get(id)!.task }));
    return from + PAGE < ids.length ? { tasks, nextCursor: page[page.length - 1]! } : { tasks };
  }

  /** Call fn on the task's next change (status or drop); returns the unsubscribe. */
  onChange(taskId: string, fn: () => void): () => void {
    const e = this.tasks.get(taskId);
    if (!e) {
      queueMicrotask(fn);
      return () => {};
    }
    e.listeners.add(fn);
    return () => e.listeners.delete(fn);
  }

  /** The task as it is now (a copy), or null. */
  peek(taskId: string): Task | null {
    const e = this.tasks.get(taskId);
    return e ? { ...e.task } : null;
  }

  /** How many tasks are kept (working and finished). */
  get size(): number {
    return this.tasks.size;
  }

  close(): void {
    for (const e of this.tasks.values()) clearTimeout(e.timer);
    this.tasks.clear();
  }

  private finish(e: Entry, status: Task['status']): void {
    e.task.status = status;
    e.task.lastUpdatedAt = new Date().toISOString();
    const ttl = e.task.ttl ?? DEFAULT_TTL_MS;
    e.dropAt = Date.now() + ttl;
    e.timer = setTimeout(() => this.drop(e.task.taskId), ttl);
    e.timer.unref();
    this.changed(e);
  }

  private changed(e: Entry): void {
    for (const fn of [...e.listeners]) fn();
  }

  private drop(taskId: string): void {
    const e = this.tasks.get(taskId);
    if (!e) return;
    clearTimeout(e.timer);
    this.tasks.delete(taskId);
    this.changed(e);
  }

  private dropOneFinished(): void {
    let first: Entry | undefined;
    for (const e of this.tasks.values()) if (e.dropAt !== undefined && (first === undefined || e.dropAt < first.dropAt!)) first = e;
    if (first) this.drop(first.task.taskId);
  }
}

/**
 * `tasks/result`: the task's result once it has one, waiting for it without polling (woken
 * by the store's change), as the protocol asks; a task dropped or unknown is an error.
 */
export async function taskResult(store: BoundedTaskStore, taskId: string, signal: AbortSignal): Promise<Result> {
  for (;;) {
    // Read and subscribe in one turn, so no change falls between the two.
    const task = store.peek(taskId);
    if (!task) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    if (terminal(task.status)) {
      if (task.status === 'cancelled') throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} was cancelled`);
      const result = await store.getTaskResult(taskId);
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        off();
        reject(new McpError(ErrorCode.InvalidRequest, 'Request cancelled'));
      };
      const off = store.onChange(taskId, () => {
        off();
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Is this tools/call task-augmented (a `task` object in its params)? */
export function taskParams(params: unknown): { ttl?: number } | undefined {
  const t = (params as { task?: unknown } | null | undefined)?.task;
  return typeof t === 'object' && t !== null && !Array.isArray(t) ? (t as { ttl?: number }) : undefined;
}
