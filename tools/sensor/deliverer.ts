// `attend deliver`: the socket conduit (issue 21 §2). For a Claude Code session with no plugin
// monitor running (an `attend install`ed session, a `-p` worker), the SessionStart hook starts
// it detached; it posts new messages to the session's inbox socket (CLAUDE_CODE_MESSAGING_SOCKET),
// one post per wake, and exits when its Claude process (pid and start time) is gone.
//
// It is the sensor's delivery cycle with another sink (tools/sensor/post-wake.ts instead of
// scan.ts), over the same loops: what wakes it (watch.ts), the watch on the Claude process and
// /clear (session-watch.ts), the presence (heartbeat.ts, as role `deliverer`). One live
// conduit per session: it holds the session's claim (tools/bus/delivery/sensor-claim.ts) while
// it posts; a sensor that asks for the claim gets it between two wakes, and the deliverer
// stands by until the claim is free again. A post is recorded once written (post-wake.ts);
// a receipt for it (held, refused, expired, dropped: whenever it comes) gives its messages
// back, unread again, and the session is left to the Stop hook and the model-armed Monitor:
// the deliverer stops, after listening a moment longer for the receipts of its last posts.
// A model's SendMessage answer to a post is written to the bus as the session's reply (answers.ts).

import { randomUUID } from 'node:crypto';
import type { Identity, ProcInfo } from '../identity/resolve.js';
import { processAlive, readSessionRecordFile } from '../identity/system.js';
import { type BackEntry, claimAsked, claimSensor, giveBackAsync, handOver, releaseSensor } from '../bus/delivery/index.js';
import type { Reporter } from '../bus/store/index.js';
import { createNameSource, knownNamesSource } from '../bus/presence/index.js';
import { nameLookup } from '../wire/display.js';
import { type InboxReceipt, inboxNoteText, inboxPost } from '../wire/inbox-post.js';
import { createAnswers } from './answers.js';
import { createDeliveryLoop } from './delivery.js';
import { beat, createHeartbeat, removeBeat } from './heartbeat.js';
import { openReplySocket, postLine } from './inbox-socket.js';
import { createPostBucket } from './post-bucket.js';
import { type PostResult, postOnce } from './post-wake.js';
import { checkSession } from './session-watch.js';
import { createSensorWatch } from './watch.js';

const TICK_MS = 1_000;
/** After a receipt, how long the deliverer still listens for the receipts of the posts it made just before. */
const RECEIPT_GRACE_MS = 1_000;
/** Posts whose receipt may still come (a held post expires after minutes): the newest this many. */
const SENT_KEPT = 256;

interface DelivererOptions {
  root: string;
  sessionsDir: string;
  identity: Identity;
  env: Readonly<Record<string, string | undefined>>;
  /** The session's inbox socket (CLAUDE_CODE_MESSAGING_SOCKET). */
  socket: string;
  pid: number;
  now(): number;
  reporter: Reporter;
  procInfo(pid: number): ProcInfo | null;
  warn(line: string): void;
  poll: boolean;
  pollIntervalMs: number;
  /**
   * The model answered a post with SendMessage to the reply socket: write `text` to the bus
   * as the session's reply to `re` (the newest message of the last post; none before a post).
   * Resolves with the reply's id; rejects with why it was not sent.
   */
  answered: (answer: { text: string; re: string | undefined }) => Promise<string>;
  stopSignal?: Promise<void>;
  tickMs?: number;
  receiptGraceMs?: number;
  /** Injected by tests: how a line reaches the inbox socket. */
  post?: (socket: string, line: string) => Promise<void>;
}

export interface DelivererExit {
  reason: 'claude-gone' | 'signal' | 'held' | 'no-session';
  delivered: number;
  receipt?: InboxReceipt;
}

export async function runDeliverer(opts: DelivererOptions): Promise<DelivererExit> {
  let who = opts.identity;
  const { root } = opts;
  if (!who.resolved || who.pid === undefined) return { reason: 'no-session', delivered: 0 };
  handOver(root, who, opts.env);

  const post = opts.post ?? postLine;
  let replyTo = '';
  const answers = createAnswers({
    socket: opts.socket,
    answered: opts.answered,
    tell: (line) => post(opts.socket, JSON.stringify(inboxPost(inboxNoteText(line, replyTo), replyTo, randomUUID()))),
    warn: opts.warn,
  });
  // Each post's messages by its msg_id, for a receipt that may still come.
  const sent = new Map<string, BackEntry[]>();
  let givingBack: Promise<void> = Promise.resolve();
  const onReceipt = (status: InboxReceipt, of: string) => {
    const back = sent.get(of);
    if (back === undefined) return; // not a post of this deliverer's, or told already
    sent.delete(of);
    receipt ??= status;
    givingBack = givingBack
      .then(() => giveBackAsync(root, who, { now: opts.now(), reporter: opts.reporter, warn: opts.warn }, back))
      .then(
        () => opts.warn(`attend: the session ${status} a post; its ${back.length} message(s) are unread again, for the Stop hook`),
        (err: unknown) => opts.warn(`attend: the session ${status} a post, and its messages could not be given back: ${(err as Error).message}`),
      );
    stop('held');
  };
  const reply = await openReplySocket(opts.socket, opts.pid, { answer: answers.take, receipt: onReceipt });
  replyTo = reply.address;
  const source = createNameSource({ root, sessionsDir: opts.sessionsDir, procInfo: opts.procInfo }, opts.now);
  const known = knownNamesSource(root);
  const names = (me: string) => nameLookup(source(), me, known());

  let stopping: DelivererExit['reason'] | undefined;
  let receipt: InboxReceipt | undefined;
  let wakeStop: () => void = () => {};
  const stopped = new Promise<void>((r) => (wakeStop = r));
  const stop = (reason: DelivererExit['reason']) => {
    stopping ??= reason;
    wakeStop();
  };
  void opts.stopSignal?.then(() => stop('signal'));
  const isStopping = () => stopping !== undefined;
  const presence = { root, pid: opts.pid, now: opts.now, warn: opts.warn, role: 'deliverer' as const };

  // Posting only while it holds the session's claim.
  let active = false;
  const take = (): boolean => {
    if (active) return true;
    if (!claimSensor(root, who.id, opts.pid).ok) return false;
    active = true;
    beat(presence, who);
    return true;
  };

  const postDeps = {
    root,
    now: opts.now,
    reporter: opts.reporter,
    names,
    warn: opts.warn,
    post: (line: string) => post(opts.socket, line),
    replyTo: reply.address,
    newMsgId: randomUUID,
    posted: (p: { msgId: string; back: BackEntry[]; newest?: string }) => {
      sent.set(p.msgId, p.back);
      if (sent.size > SENT_KEPT) sent.delete(sent.keys().next().value as string);
      if (p.newest !== undefined) answers.posted(p.newest);
    },
  };
  const idle: PostResult = { delivered: [], digest: false, later: false, closed: false, unsettled: false };
  const bucket = createPostBucket(opts.now);
  let refill: NodeJS.Timeout | undefined;
  const delivery = createDeliveryLoop({
    scan: { ...postDeps, write: () => {} },
    cycle: async (w) => {
      if (!active || isStopping()) return idle;
      // Out of posts for now (Claude Code's limit per sender): what comes meanwhile waits and
      // goes in one post when the bucket has one again.
      const wait = refill === undefined ? bucket.take() : 1;
      if (wait > 0) {
        refill ??= setTimeout(() => {
          refill = undefined;
          delivery.request();
        }, wait);
        return idle;
      }
      const r = await postOnce(postDeps, w);
      return r;
    },
    who: () => who,
    stopping: isStopping,
    closed: () => {},
  });
  const watch = createSensorWatch({
    root,
    pid: opts.pid,
    poll: opts.poll,
    pollIntervalMs: opts.pollIntervalMs,
    who: () => who,
    stopping: isStopping,
    wake: delivery.request,
    renamed: delivery.renamed,
    warn: opts.warn,
  });
  await watch.start();
  if (take()) delivery.wake();

  const session = {
    root,
    env: opts.env,
    pid: opts.pid,
    role: 'deliverer' as const,
    alive: (pid: number, start: string | undefined) => processAlive(pid, start, opts.procInfo),
    readRecord: (pid: number) => readSessionRecordFile(opts.sessionsDir, pid),
    warn: opts.warn,
  };
  const heartbeat = createHeartbeat(presence);
  let handing = false;
  const tick = setInterval(() => {
    if (stopping || handing) return;
    // A tick never ends the conduit on its own (issue 21 §2): a bus that vanished, a full
    // disk or a lock timeout is a warning, and the next tick tries again.
    try {
      const s = checkSession(session, who);
      if (s.gone) return stop('claude-gone');
      if (s.cleared !== undefined) {
        who = s.who;
        if (active) beat(presence, who);
        void watch.membershipChanged();
      }
      if (active && claimAsked(root, who.id, opts.pid)) {
        // A sensor started (the plugin's monitor, or one the model armed): it delivers from now.
        handing = true;
        void delivery.idle().then(() => {
          active = false;
          releaseSensor(root, who.id, opts.pid);
          removeBeat(presence, who);
          opts.warn('attend: a sensor asked for the session; the deliverer stands by');
          handing = false;
        });
        return;
      }
      if (!active && take()) {
        opts.warn('attend: the session has no other conduit; the deliverer posts again');
        delivery.request();
      }
      watch.tick();
      if (active && heartbeat.due(who)) delivery.request();
    } catch (err) {
      opts.warn(`attend: tick failed: ${(err as Error).message}`);
    }
  }, opts.tickMs ?? TICK_MS);

  await stopped;
  clearInterval(tick);
  if (refill !== undefined) clearTimeout(refill);
  await delivery.idle();
  delivery.close();
  watch.close();
  // Held or refused once, the posts just before may be too: their receipts come to the
  // reply socket a moment later, and their messages go back as well.
  if (stopping === 'held') await new Promise((r) => setTimeout(r, opts.receiptGraceMs ?? RECEIPT_GRACE_MS));
  await givingBack;
  await answers.settled();
  reply.close();
  if (active) {
    releaseSensor(root, who.id, opts.pid);
    removeBeat(presence, who);
  }
  return { reason: stopping ?? 'signal', delivered: delivery.delivered(), ...(receipt ? { receipt } : {}) };
}
