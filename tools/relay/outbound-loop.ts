// The outbound loop: local files --(Outbox.scan)--> publish, a chunk at a time --ack-->
// done, and the cursor advanced. What to publish is outbound.ts (no NATS there); the publish
// itself is publish.ts; this module decides what each answer means and when to look again.
//
// The filesystem stays the record: a hub that is away only delays. What is found meanwhile
// waits for the reconnect (which wakes the loop), and a publish that failed is looked at
// again on the next scan until the hub acknowledges it.

import { basename, join } from 'node:path';
import { setImmediate as yieldToIo, setTimeout as sleep } from 'node:timers/promises';
import { ensureDir, signalsDir } from '../bus/store/index.js';
import { isMissingOnHub, isTooLarge } from './nats-errors.js';
import type { Outbox, Pending } from './outbound.js';
import type { OwnWrites } from './own-writes.js';
import { type PubAck, type Publisher, pubHeaders } from './publish.js';
import type { SharedState } from './state.js';
import type { StatusBoard } from './status-board.js';
import { type RelayStatus, park, writeCursor, writeCursorAsync } from './store.js';
import { Wake } from './wake.js';

/** Messages per publish (one reply subscription and one deadline each). */
const BATCH = 512;
/**
 * How long a chunk waits for its acknowledgements: half a second, and 3 ms more a message, at
 * most 2 s. Short, because a stream whose leader died answers nothing until the cluster has
 * elected another, and the first publish after that is what ends the outage; a late ack only
 * costs a republish, which the hub's duplicate window (Nats-Msg-Id) absorbs.
 */
export function ackTimeoutMs(messages: number): number {
  return Math.min(2_000, 500 + 3 * messages);
}
/** After a failed chunk: the hub is away or refusing, so do not spin. */
const FAILED_PAUSE_MS = 250;
/** During a burst the cursor is written this often at most (each write is synced). */
const CURSOR_EVERY_MS = 2_000;
const PRUNE_EVERY_MS = 5_000;
/** The slow poll that covers missed directory events, while a directory is not watched (signals/ not made yet)… */
const POLL_MS = 2_000;
/** …and while every one is: inotify does not miss a rename, so this is only a net (and an idle relay's most frequent wake). */
const POLL_WATCHED_MS = 10_000;

/** What one chunk's answers mean, message by message (a message has one entry per route). */
interface ChunkOutcome {
  /** Every route of these was acknowledged (or parked): the cursor may pass them. */
  done: Pending[];
  /** Some route failed: looked at again on the next scan. */
  retry: Pending[];
  /** Routes the hub will never take (too large), with the reason: recorded, not retried. */
  parked: { p: Pending; reason: string }[];
  /** Acknowledgements that stored something new (not the hub's duplicates). */
  published: number;
  /** Why the last failed route failed (the status's lastError), when one did. */
  failure?: string;
  /** A publish found no stream on the hub (it lost its store): the stream wants repair. */
  missing: boolean;
}

/** Pure: the answers `results[i]` to `chunk[i]`, folded per message. */
export function settleChunk(chunk: Pending[], results: PromiseSettledResult<PubAck>[]): ChunkOutcome {
  const byMsg = new Map<string, { p: Pending; left: number; failed: boolean }>();
  for (const p of chunk) {
    const k = `${p.dir}/${p.id}`;
    const e = byMsg.get(k);
    if (e) e.left++;
    else byMsg.set(k, { p, left: 1, failed: false });
  }
  const out: ChunkOutcome = { done: [], retry: [], parked: [], published: 0, missing: false };
  results.forEach((r, i) => {
    const p = chunk[i]!;
    const e = byMsg.get(`${p.dir}/${p.id}`)!;
    if (r.status === 'fulfilled') {
      e.left--;
      if (!r.value.duplicate) out.published++;
      return;
    }
    const msg = String((r.reason as Error)?.message ?? r.reason);
    if (isTooLarge(r.reason)) {
      // The hub will never take it: keep a record and move on (the local file stays).
      out.parked.push({ p, reason: `the hub refused it: ${msg}` });
      e.left--;
      return;
    }
    e.failed = true;
    out.failure = msg;
    if (isMissingOnHub(r.reason)) out.missing = true;
  });
  for (const e of byMsg.values()) (e.failed || e.left > 0 ? out.retry : out.done).push(e.p);
  return out;
}

export interface ChunkDeps {
  root: string;
  host: string;
  now(): number;
  pub: Pick<Publisher, 'publishAll'>;
  /** Puts a signer's key on the hub before its messages (tools/relay/state.ts). */
  keys: Pick<SharedState, 'ensureKey'>;
  outbox: Pick<Outbox, 'done' | 'retry'>;
  status: RelayStatus;
}

/** Publish one chunk and record what the hub said; `missing` as in ChunkOutcome. */
export async function publishChunk(d: ChunkDeps, chunk: Pending[]): Promise<{ missing: boolean }> {
  // Every signer's key is on the hub before its messages are: a receiver that meets a key it
  // does not know asks the hub for it (tools/relay/state.ts).
  try {
    const signers = new Map(chunk.flatMap((p) => (p.signer ? [[p.signer.keyId, p.signer] as const] : [])));
    for (const s of signers.values()) await d.keys.ensureKey(s.node, s.keyId);
  } catch (err) {
    for (const p of new Map(chunk.map((p) => [`${p.dir}/${p.id}`, p])).values()) d.outbox.retry(p);
    d.status.lastError = `publish keys: ${(err as Error).message}`;
    await sleep(FAILED_PAUSE_MS);
    return { missing: false };
  }
  const results = await d.pub.publishAll(
    chunk.map((p) => ({ subject: p.subject, data: p.data, headers: pubHeaders(p, d.host) })),
    ackTimeoutMs(chunk.length),
  );
  const out = settleChunk(chunk, results);
  d.status.published += out.published;
  for (const { p, reason } of out.parked) {
    park(d.root, { at: d.now(), kind: 'outbound', reason, subject: p.subject, id: p.id, origin: d.host });
    d.status.parked++;
  }
  for (const p of out.retry) d.outbox.retry(p);
  for (const p of out.done) d.outbox.done(p);
  if (out.failure !== undefined) {
    d.status.lastError = `publish: ${out.failure}`;
    await sleep(FAILED_PAUSE_MS);
  } else d.status.lastContact = d.now();
  return { missing: out.missing };
}

/**
 * relay/cursor.json: written every CURSOR_EVERY_MS at most, off the event loop (a restart
 * looks back far more than that anyway: outbound.ts SLACK_MS, absorbed by the hub's duplicate
 * window), and for certain at close. The loop writes it when due (`dueIn`), so a message
 * relayed on its own costs no cursor write of its own: two syncs on the disk the next
 * message's import waits for.
 */
export class CursorSaver {
  private last = 0;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly root: string,
    private readonly outbox: Pick<Outbox, 'cursor' | 'cursorChanged'>,
    private readonly now: () => number,
    private readonly onError: (err: Error) => void,
  ) {}

  save(force: boolean): void {
    if (this.writing || !this.outbox.cursorChanged || (!force && this.now() - this.last < CURSOR_EVERY_MS)) return;
    this.outbox.cursorChanged = false;
    this.last = this.now();
    this.writing = writeCursorAsync(this.root, structuredClone(this.outbox.cursor))
      .catch((err: Error) => {
        // Not recorded: a restart looks back further, and the hub absorbs what it sees twice.
        this.outbox.cursorChanged = true;
        this.onError(err);
      })
      .finally(() => {
        this.writing = null;
      });
  }

  /** Milliseconds until a changed cursor is due (0: now), or Infinity when nothing changed. */
  dueIn(): number {
    if (!this.outbox.cursorChanged) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.last + CURSOR_EVERY_MS - this.now());
  }

  /** Resolves when no write is under way (a save meanwhile does nothing). */
  async idle(): Promise<void> {
    await this.writing;
  }

  /** The last write, after any still under way. */
  async close(): Promise<void> {
    await this.idle();
    writeCursor(this.root, this.outbox.cursor);
  }
}

interface OutboundDeps {
  root: string;
  host: string;
  now(): number;
  outbox: Outbox;
  /** This relay's own imports, which wake nothing (own-writes.ts). */
  own?: Pick<OwnWrites, 'isOwn'>;
}

/** The directory names of the paths a wake gave (each one under signals/). */
function namesOf(paths: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths) out.add(basename(p));
  return out;
}

/** What the loop needs once the hub is there. */
interface OutboundRun {
  pub: Pick<Publisher, 'publishAll'>;
  keys: Pick<SharedState, 'ensureKey'>;
  board: Pick<StatusBoard, 'status' | 'save'>;
  /** The hub lost its stream: make it again (hub.ts HubRepair). */
  repair(): void;
  /** When there is nothing to publish (the inbound backlog figure, now and then). */
  idle(): Promise<void>;
  trace: ((line: string) => void) | null;
  stopping(): boolean;
}

export class OutboundLoop {
  /** Wakes the loop: a directory changed, the relay stops, the connection came back. */
  readonly wake: Wake;
  /** Local messages found while the hub is away, kept for the reconnect. */
  private waiting = 0;

  constructor(private readonly d: OutboundDeps) {
    const own = d.own;
    this.wake = new Wake(own ? (dir, name) => own.isOwn(dir, name) : undefined);
  }

  /** Local messages found and not yet acknowledged (status.json's outboundBacklog). */
  get backlog(): number {
    return Math.max(this.d.outbox.unacked.count, this.d.outbox.inflightCount, this.waiting);
  }

  /** When the oldest of them was found (status.json's outboundSince), or null. */
  get backlogSince(): number | null {
    return this.d.outbox.unacked.since;
  }

  /**
   * Before the first connection (a hub away, a certificate refused): count what waits, so
   * status never shows nothing while messages wait; publish nothing.
   */
  countWhileAway(): void {
    const { outbox, now } = this.d;
    const pending = outbox.scan(now());
    for (const p of pending) outbox.retry(p);
    this.waiting = new Set(pending.map((p) => `${p.dir}/${p.id}`)).size;
  }

  /** Until `stopping()`; the cursor is written when it returns. */
  async run(r: OutboundRun): Promise<void> {
    const { root, host, now, outbox } = this.d;
    const { status } = r.board;
    const cursor = new CursorSaver(root, outbox, now, (err) => {
      status.lastError = `cursor: ${err.message}`;
    });
    const chunkDeps: ChunkDeps = { root, host, now, pub: r.pub, keys: r.keys, outbox, status };
    let lastPrune = 0;
    // Made if missing (as any writer would): a directory that is not there cannot be watched,
    // and a fresh machine's relay would otherwise poll every POLL_MS until a first message.
    try {
      ensureDir(signalsDir(root));
    } catch {
      // the bus is unusable for a moment: the poll tries to watch it again
    }
    let watched = false;
    while (!r.stopping()) {
      // Every round yields to I/O and timers: a round made only of resolved promises (the
      // hub away, publishes failing at once) must never starve the client's reconnect.
      await yieldToIo();
      const woken = this.wake.clear();
      // A round woken by some directories' events looks at those; the poll, a new directory
      // and anything else look everywhere (and watch what is new: signals/ itself first, so a
      // directory made while the scan lists is seen).
      let pending: Pending[];
      if (woken === 'all') {
        watched = this.wake.top(signalsDir(root));
        pending = outbox.scan(now());
        for (const d of outbox.dirNames) watched = this.wake.watch(join(signalsDir(root), d)) && watched;
      } else pending = outbox.scan(now(), namesOf(woken));
      if (pending.length > 0 && !status.connected) {
        // The hub is away: publishing now only waits for timeouts. Keep them for the
        // reconnect (which wakes this loop); the local bus goes on as ever.
        for (const p of pending) outbox.retry(p);
        this.waiting = new Set(pending.map((p) => `${p.dir}/${p.id}`)).size;
        r.board.save();
        await this.wake.wait(POLL_MS);
        continue;
      }
      this.waiting = 0;
      if (pending.length > 0) {
        for (let i = 0; i < pending.length && !r.stopping(); i += BATCH) {
          const chunk = pending.slice(i, i + BATCH);
          const t0 = Date.now();
          const { missing } = await publishChunk(chunkDeps, chunk);
          if (missing) r.repair();
          r.trace?.(`trace: published ${chunk.length} in ${Date.now() - t0}ms${status.lastError ? ` (last error: ${status.lastError})` : ''}`);
          r.board.save();
        }
        cursor.save(false);
        if (now() - lastPrune > PRUNE_EVERY_MS) {
          outbox.prune();
          lastPrune = now();
        }
        continue;
      }
      cursor.save(false);
      await r.idle();
      r.board.save();
      if (r.stopping()) continue;
      // The slow poll, or sooner when a directory is due for a full listing or the cursor for
      // a write. No settling delay after a wake: a burst batches by itself (what is written
      // while a chunk waits for its acks is the next scan's chunk), and a scan that came
      // between a message's rename and its index line is woken again by the line (wake.ts).
      if (!this.wake.pending) await this.wake.wait(Math.max(5, Math.min(watched ? POLL_WATCHED_MS : POLL_MS, outbox.recheckAt - now() + 1, cursor.dueIn() + 1)));
    }
    this.wake.close();
    await cursor.close();
  }
}
