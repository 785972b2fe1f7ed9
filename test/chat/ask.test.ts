// `/ask` in chat (issue 23 §1): the question goes out through the ask verb's wait, which
// stays pending (the status line names whom it waits for) until the party replies. On a real
// temporary bus with a live session answering in-process.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { createChatActions } from '../../tools/chat/actions.js';
import { pendingText } from '../../tools/chat/components/status-line.js';
import { runSlash } from '../../tools/chat/slash.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { type FakeSession, fakeSession, makeTempBus, runInProcess, type TempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
let api: FakeSession;
beforeEach(() => {
  bus = makeTempBus();
  api = fakeSession(bus, { name: 'api' });
});
afterEach(() => {
  api.dispose();
  bus.cleanup();
});

describe('/ask (issue 23 §1)', () => {
  it('sends, stays pending, and settles with the reply the party writes', async () => {
    const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: 'tester' });
    const root = makeCtx().root();
    writePresence(root, { id: 'tester', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
    const stop = new AbortController();
    const out = runSlash('/ask @api which port?', { actions: createChatActions({ makeCtx, root, now: Date.now }), tabChannel: null, replyTarget: () => undefined, waits: stop.signal });
    expect(out.consumed).toBe(true);
    expect(out.lines[0]?.text).toMatch(/^asked api \(\S+\); waiting for the reply$/);
    const asked = out.asked!;
    expect(asked.name).toBe('api');
    let settled = false;
    void asked.answer.finally(() => (settled = true));
    const reply = await runInProcess(['send', '--to', 'human:tester', '--re', asked.id, 'port 8080'], { env: api.env, user: 'tester' });
    expect(reply.exitCode, reply.stderr).toBe(0);
    const answer = await asked.answer;
    expect(settled).toBe(true);
    expect(answer.reply).toMatchObject({ body: 'port 8080', re: asked.id, fromId: api.sessionId });
  });

  it('/ask without a question is refused and keeps the draft', () => {
    const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: 'tester' });
    const out = runSlash('/ask @api', { actions: createChatActions({ makeCtx, root: makeCtx().root(), now: Date.now }), tabChannel: null, replyTarget: () => undefined });
    expect(out.consumed).toBe(false);
    expect(out.lines[0]).toMatchObject({ level: 'error', text: expect.stringMatching(/needs the question/) });
  });

  it('the status line names each party still to answer, once', () => {
    expect(pendingText([])).toBe('');
    expect(pendingText(['api', 'web', 'api'])).toBe('  · waiting for a reply from api, web');
  });
});
