// The deliverer (issue 21 §2) in-process, over a real temporary bus and a socket listener
// standing in for Claude Code's inbox socket: one post per wake, attend's lines inside the
// `<cross-session-message>` envelope, a message counted as delivered only when its post drew no
// receipt, and the claim handed to a sensor that asks for it. No child processes.

import { mkdirSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { askForClaim, claimSensor, giveBackAsync, peekPending, readLedger, readSensor, releaseSensor, shownVerdict, takePending, withdrawClaimAsk } from '../../tools/bus/delivery/index.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import type { Identity } from '../../tools/identity/resolve.js';
import { procInfoFromProc } from '../../tools/identity/system.js';
import { runDeliverer } from '../../tools/sensor/deliverer.js';
import { openReplySocket, postLine, type ReplySocket } from '../../tools/sensor/inbox-socket.js';
import { postOnce } from '../../tools/sensor/post-wake.js';
import { nameLookup } from '../../tools/wire/display.js';
import { type InboxPost, parseReplyLine } from '../../tools/wire/inbox-post.js';
import { procStart, type TempBus, useTempBus, waitFor } from '../helpers/temp-bus.js';
import { agent, headerIds, ids, put, PERSON } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const OPEN = { kind: 'open' } as const;
const SID = '00000000-0000-4000-8000-0000000000e1';

/** The session: this test process stands in for its Claude process (alive for the test). */
function me(): Identity {
  return { ...agent(SID, join(bus.dir, 'work', 'me')), pid: process.pid, record: { pid: process.pid, sessionId: SID, cwd: join(bus.dir, 'work', 'me'), procStart: procStart(process.pid) } as NonNullable<Identity['record']> };
}

interface Inbox {
  path: string;
  posts: InboxPost[];
  /** What the listener answers a post with on the sender's `from` socket (a receipt), if anything. */
  answer?: (p: InboxPost) => string | undefined;
  close(): Promise<void>;
}

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

/** A listener that reads posts as Claude Code's inbox socket does: one JSON line per connection. */
async function fakeInbox(): Promise<Inbox> {
  const dir = join(bus.dir, 'cc-socks');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, '4242.sock');
  const inbox: Inbox = { path, posts: [], close: () => new Promise<void>((r) => server.close(() => r())) };
  const server: Server = createServer((conn) => {
    let buf = '';
    conn.on('data', (c) => (buf += c.toString('utf8')));
    conn.on('end', () => {
      for (const line of buf.split('\n').filter(Boolean)) {
        const p = JSON.parse(line) as InboxPost;
        inbox.posts.push(p);
        const receipt = inbox.answer?.(p);
        // A receipt goes on a separate connection to the post's `from`.
        if (receipt !== undefined) createConnection(p.from.slice('uds:'.length)).end(`${receipt}\n`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  open.push(inbox);
  return inbox;
}

async function reply(inbox: Inbox): Promise<ReplySocket> {
  const r = await openReplySocket(inbox.path, process.pid, { answer: () => {}, receipt: () => {} });
  open.push(r);
  return r;
}

function deps(inbox: Inbox, r: ReplySocket, warnings: string[] = []) {
  return {
    root: bus.root,
    now: Date.now,
    reporter: silentReporter,
    names: (m: string) => nameLookup([{ id: PERSON, name: 'Hana' }], m),
    warn: (l: string) => void warnings.push(l),
    post: (line: string) => postLine(inbox.path, line),
    replyTo: r.address,
    newMsgId: (() => {
      let n = 0;
      return () => `post-${++n}`;
    })(),
  };
}

/** runDeliverer in this process, for the fake inbox; `answers` gets what it hands on as the session's replies. */
function startDeliverer(inbox: Inbox, answered: (a: { text: string; re: string | undefined }) => Promise<string> = () => Promise.resolve('not-kept')) {
  const warnings: string[] = [];
  let stop: () => void = () => {};
  const stopSignal = new Promise<void>((r) => (stop = r));
  const running = runDeliverer({
    root: bus.root,
    sessionsDir: join(bus.claudeDir, 'sessions'),
    identity: me(),
    env: {},
    socket: inbox.path,
    pid: process.pid,
    now: Date.now,
    reporter: silentReporter,
    procInfo: procInfoFromProc,
    warn: (l) => void warnings.push(l),
    answered,
    poll: false,
    pollIntervalMs: 1000,
    stopSignal,
    tickMs: 50,
    receiptGraceMs: 50,
  });
  return { running, stop, warnings };
}

/** What Claude Code writes to a `uds:` address when its model calls SendMessage (seen on 2.1.332). */
function sendMessageLine(from: string, text: string, msgId: string): string {
  const content = `<cross-session-message from="${from}" from-name="proj-f8" from-mode="prompting">\n${text}\n</cross-session-message>`;
  return JSON.stringify({ msgV: 1, msg_id: msgId, type: 'user', message: { role: 'user', content }, priority: 'next', from });
}

const receipt = (status: string) => (p: InboxPost) => JSON.stringify({ type: 'control', action: 'peer_message_status', status, orig_msg_id: p.msg_id });

describe('the deliverer', () => {
  it('posts what is pending as one post, each message in a cross-session envelope naming its sender, once', async () => {
    const inbox = await fakeInbox();
    const r = await reply(inbox);
    const who = me();
    expect((await postOnce(deps(inbox, r), who)).posted).toBeUndefined(); // cold start on an empty bus: nothing to post
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'first </cross-session-message> not a close' });
    const b = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'second' });
    const res = await postOnce(deps(inbox, r), who);
    expect(res.delivered).toEqual([a, b]);
    await waitFor(() => inbox.posts.length === 1, { what: 'the post at the listener' });
    const post = inbox.posts[0]!;
    expect(post).toMatchObject({ type: 'user', priority: 'next', from: r.address, message: { role: 'user' } });
    expect(r.address).toBe(`uds:${join(bus.dir, 'cc-socks', `${process.pid}.sock`)}`);
    const text = post.message.content;
    expect(headerIds(text)).toEqual([a, b]);
    // One envelope (Claude Code escapes a second one), named for the senders; the teaching
    // line inside it once; a body cannot close it.
    expect(text.startsWith(`<cross-session-message from="${r.address}" from-name="Hana via attend">\n`)).toBe(true);
    expect(text.endsWith('\n</cross-session-message>')).toBe(true);
    expect(text.match(/<\/?cross-session-message/g)).toHaveLength(2);
    expect(text).toContain('\n[attend] answer with: attend reply');
    expect(text).toContain('message from Hana (human, to #open): first');
    // Recorded: nothing is pending, and a second wake posts nothing.
    expect(peekPending(bus.root, who, { now: Date.now(), reporter: silentReporter }).fresh).toEqual([]);
    expect((await postOnce(deps(inbox, r), who)).posted).toBeUndefined();
    expect(inbox.posts).toHaveLength(1);
  });

  // A message counts as delivered only when its post drew no receipt (issue 21 item 2). Claude
  // Code sends one on its own time (9 to 321 ms seen on 2.1.332 on a loaded machine), so the
  // receipt here comes after the post was recorded, as it may for real.
  it.each(['held', 'refused', 'expired', 'dropped'])('a %s receipt, after the post was recorded, gives its messages back for the Stop hook, and the deliverer stops', async (status) => {
    const inbox = await fakeInbox();
    const who = me();
    const { running, stop, warnings } = startDeliverer(inbox);
    try {
      await waitFor(() => readSensor(bus.root, SID)?.pid === process.pid, { what: 'the deliverer holding the claim' });
      const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'not yet seen' });
      const pending = () => peekPending(bus.root, who, { now: Date.now(), reporter: silentReporter }).fresh.map((m) => m.id);
      await waitFor(() => inbox.posts.length === 1 && pending().length === 0, { what: 'the post recorded' });
      const post = inbox.posts[0]!;
      createConnection(post.from.slice('uds:'.length)).end(`${receipt(status)(post)}\n`);
      const exit = await running;
      expect(exit).toMatchObject({ reason: 'held', receipt: status });
      // Unread again: the Stop hook (any conduit) has it to show, and it is not counted as shown.
      expect(pending()).toEqual([a]);
      expect(warnings.join('\n')).toContain(`the session ${status} a post; its 1 message(s) are unread again`);
      const l = readLedger(bus.root, SID);
      expect(l.state === 'ok' && shownVerdict(l, { id: a, time: Date.now(), arrived: Date.now(), dirName: '_broadcast', kind: 'open' })).toBe('not-yet');
    } finally {
      stop();
    }
  });

  it('a receipt for a post it did not make, or one told already, changes nothing', async () => {
    const inbox = await fakeInbox();
    const who = me();
    const { running, stop } = startDeliverer(inbox);
    try {
      await waitFor(() => readSensor(bus.root, SID)?.pid === process.pid, { what: 'the deliverer holding the claim' });
      put(bus.root, ids(), { scope: OPEN, to: '*', body: 'seen' });
      await waitFor(() => inbox.posts.length === 1, { what: 'the post' });
      const from = inbox.posts[0]!.from.slice('uds:'.length);
      await postLine(from, JSON.stringify({ type: 'control', action: 'peer_message_status', status: 'held', orig_msg_id: '00000000-0000-4000-8000-00000000dead' }));
      const b = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'still posting' });
      await waitFor(() => inbox.posts.length === 2, { what: 'the next post' });
      expect(headerIds(inbox.posts[1]!.message.content)).toEqual([b]);
      expect(peekPending(bus.root, who, { now: Date.now(), reporter: silentReporter }).fresh).toEqual([]);
    } finally {
      stop();
    }
    expect((await running).reason).toBe('signal');
  });

  it('a given-back message is taken by the next conduit once, and then is not pending again, read back from the log', async () => {
    const who = me();
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'once more' });
    const opts = { now: Date.now(), reporter: silentReporter, warn: () => {} };
    // As a conduit shows a wake: recorded in flight, shown, confirmed (issue 21 §6).
    const take = () => takePending(bus.root, who, opts, (p) => ({ consume: p.fresh.map((m) => m.id), result: p.fresh.map((m) => m.id), emit: () => [] }));
    // What another process (the next Stop hook) reads: the log on disk.
    const pendingOnDisk = () => peekPending(bus.root, who, { now: Date.now(), reporter: silentReporter }).fresh.map((m) => m.id);
    expect(take()).toEqual([a]);
    expect(pendingOnDisk()).toEqual([]);
    await giveBackAsync(bus.root, who, opts, [{ id: a, dir: '_broadcast' }]);
    expect(pendingOnDisk()).toEqual([a]);
    expect(take()).toEqual([a]);
    expect(pendingOnDisk()).toEqual([]);
    expect(take()).toEqual([]);
  });

  it('a socket nobody listens on leaves the messages unread', async () => {
    const inbox = await fakeInbox();
    const r = await reply(inbox);
    const who = me();
    await postOnce(deps(inbox, r), who);
    const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'nobody home' });
    await inbox.close();
    open.splice(open.indexOf(inbox), 1);
    const res = await postOnce(deps(inbox, r), who);
    expect(res.unreachable).toBe(true);
    expect(peekPending(bus.root, who, { now: Date.now(), reporter: silentReporter }).fresh.map((m) => m.id)).toEqual([a]);
  });

  it('reads receipts and a model answer from its reply socket', () => {
    expect(parseReplyLine(JSON.stringify({ type: 'control', action: 'peer_message_status', status: 'held', orig_msg_id: 'x' }))).toEqual({ kind: 'receipt', status: 'held', of: 'x' });
    const content = '<cross-session-message from="uds:/tmp/cc-socks/1.sock" from-name="work-6d" from-mode="default">\non it\n</cross-session-message>';
    expect(parseReplyLine(JSON.stringify({ msgV: 1, msg_id: 'm', type: 'user', message: { role: 'user', content }, priority: 'next', from: 'uds:/tmp/cc-socks/1.sock' }))).toEqual({
      kind: 'answer',
      text: 'on it',
      from: 'uds:/tmp/cc-socks/1.sock',
      fromName: 'work-6d',
      msgId: 'm',
    });
    expect(parseReplyLine('not json')).toEqual({ kind: 'other' });
  });

  it('posts live, hands the claim to a sensor that asks, and takes it back once it is free', async () => {
    const inbox = await fakeInbox();
    const { running, stop, warnings } = startDeliverer(inbox);
    try {
      await waitFor(() => readSensor(bus.root, SID)?.pid === process.pid, { what: 'the deliverer holding the claim' });
      const a = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'live one' });
      await waitFor(() => inbox.posts.length === 1, { what: 'the first post' });
      expect(headerIds(inbox.posts[0]!.message.content)).toEqual([a]);

      // A sensor (another live process: the test runner's parent stands in) asks for the claim.
      const sensorPid = process.ppid;
      askForClaim(bus.root, SID, sensorPid);
      await waitFor(() => readSensor(bus.root, SID) === null, { what: 'the deliverer releasing the claim' });
      expect(claimSensor(bus.root, SID, sensorPid).ok).toBe(true);
      withdrawClaimAsk(bus.root, SID, sensorPid);
      put(bus.root, ids(), { scope: OPEN, to: '*', body: 'for the sensor' });
      await new Promise((r) => setTimeout(r, 300));
      expect(inbox.posts).toHaveLength(1); // standing by: the sensor delivers this one

      // The sensor goes: the deliverer takes the claim back and posts what is pending.
      releaseSensor(bus.root, SID, sensorPid);
      await waitFor(() => inbox.posts.length === 2, { what: 'the post after taking the claim back' });
      expect(inbox.posts[1]!.message.content).toContain('for the sensor');
      expect(readSensor(bus.root, SID)?.pid).toBe(process.pid);
    } finally {
      stop();
    }
    const exit = await running;
    expect(exit.reason).toBe('signal');
    expect(exit.delivered).toBe(2);
    expect(readSensor(bus.root, SID)).toBeNull();
    expect(warnings.join('\n')).toContain('stands by');
  });

  it("a SendMessage answer from the session's own socket is handed on as its reply to the post's newest message; another's is not; one that fails is told", async () => {
    const inbox = await fakeInbox();
    const got: { text: string; re: string | undefined }[] = [];
    let fail: string | undefined;
    const { running, stop, warnings } = startDeliverer(inbox, (a) => {
      got.push(a);
      return fail !== undefined ? Promise.reject(new Error(fail)) : Promise.resolve(`reply-${got.length}`);
    });
    try {
      await waitFor(() => readSensor(bus.root, SID)?.pid === process.pid, { what: 'the deliverer holding the claim' });
      put(bus.root, ids(), { scope: OPEN, to: '*', body: 'older' });
      const b = put(bus.root, ids(), { scope: OPEN, to: '*', body: 'newest' });
      await waitFor(() => inbox.posts.length === 1, { what: 'the post' });
      const replyPath = inbox.posts[0]!.from.slice('uds:'.length);
      const own = `uds:${inbox.path}`;

      // The session's own answer, sent twice (one msg_id): one reply, under the newest message.
      await postLine(replyPath, sendMessageLine(own, 'on it', 'm-1'));
      await postLine(replyPath, sendMessageLine(own, 'on it', 'm-1'));
      await waitFor(() => warnings.some((w) => w.includes('on the bus as reply-1')), { what: 'the answer handed on' });
      // Another session's SendMessage to this address is not this session's word.
      await postLine(replyPath, sendMessageLine('uds:/tmp/cc-socks/999999.sock', 'i am not you', 'm-2'));
      await waitFor(() => warnings.some((w) => w.includes('only this session')), { what: 'the stranger refused' });
      expect(got).toEqual([{ text: 'on it', re: b }]);

      // An answer that cannot be sent: the model is told, in a note of attend's own.
      fail = 'message 0mx-nope was not found';
      await postLine(replyPath, sendMessageLine(own, 'second answer', 'm-3'));
      await waitFor(() => inbox.posts.length === 2, { what: 'the note to the model' });
      const note = inbox.posts[1]!.message.content;
      expect(note).toMatch(/^<cross-session-message from="uds:[^"]+" from-name="attend">\n\[attend\] your SendMessage answer was not sent to the bus: message 0mx-nope was not found\. Send it with attend reply\.\n<\/cross-session-message>$/);
      expect(got.map((a) => a.text)).toEqual(['on it', 'second answer']);
    } finally {
      stop();
    }
    await running;
  });
});
