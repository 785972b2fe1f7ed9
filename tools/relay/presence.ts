// Presence across machines: each relay puts its live roster under its host's key in a KV
// bucket whose TTL (per bucket on nats-server 2.9) ages out a machine that stopped
// refreshing; it puts on change (its roster's directories are watched) and otherwise once per
// half TTL (the slow heartbeat), and writes the other hosts' rosters to relay/remote.json for the bus to read
// (tools/bus/presence/remote.ts). A host's entry counts as seen when this relay received it, on this
// machine's clock, so clock skew between machines never ages anyone out early.

import type { NatsConnection } from '@nats-io/transport-node';
import { type KV, Kvm } from '@nats-io/kv';
import { type RemoteMember, type RemoteRoster, readRemoteRoster, rememberParties, writeRemoteRoster } from '../bus/presence/index.js';
import { qualifyId } from '../wire/hosts.js';
import { DirWatch } from '../bus/store/index.js';
import { isMissingOnHub } from './nats-errors.js';

export const PRESENCE_BUCKET = 'attend-presence';

/**
 * How often this machine's roster is looked at when nothing said it changed (local files
 * only, no hub): what no watch sees, a session's process that died leaving its record or a
 * heartbeat gone stale. A session that starts or ends, or a record or presence file that
 * changes, is seen by the watch on its directory (DirWatch), and looked at within
 * EVENT_GAP_MS; the slow heartbeat has its own time (half the TTL), whatever the look's.
 */
const LOOK_MS = 10_000;
/** A beat this close to due is put now (a timer may fire a millisecond early by the clock). */
const BEAT_SLACK_MS = 50;
/**
 * Looks that events ask for come at most this often (a hundred sessions' heartbeats are
 * rewrites, each an event); the first event after a quiet spell is looked at at once.
 */
const EVENT_GAP_MS = 2_000;
/** A put that failed (the hub away) is tried again this long after, not at once. */
const RETRY_MS = 2_000;

/**
 * When the next look is due: the slow look, the heartbeat, or an event's look (at once, but
 * never within EVENT_GAP_MS of the last event's); a due beat that failed waits RETRY_MS.
 */
export function nextLookAt(s: { lastLook: number; lastEventLook: number; lastPut: number; beatMs: number; event: boolean }): number {
  if (s.event) return Math.min(s.lastLook + LOOK_MS, Math.max(s.lastEventLook + EVENT_GAP_MS, s.lastLook));
  return Math.max(Math.min(s.lastLook + LOOK_MS, s.lastPut + s.beatMs), s.lastLook + RETRY_MS);
}

export class Presence {
  private kv: KV | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private watching: { stop(): void } | null = null;
  private dirWatches: DirWatch[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly host: string,
    private readonly ttlS: number,
    private readonly root: string,
    private readonly now: () => number,
    private readonly local: () => RemoteMember[],
    private readonly log: (line: string) => void,
    /** Copies of the bucket the hub keeps (hub.ts replicasFor). */
    private readonly replicas: () => number = () => 1,
    /** Where the roster comes from (the session records, the presence directory): watched. */
    private readonly rosterDirs: string[] = [],
    /** A put or the bucket's watch found it missing: check the hub now (hub.ts HubRepair.repair). */
    private readonly onMissing: () => void = () => {},
  ) {}

  private open(): Promise<KV> {
    return new Kvm(this.nc).create(PRESENCE_BUCKET, { ttl: this.ttlS * 1000, history: 1, replicas: this.replicas() });
  }

  /** The hub lost the bucket (hub.ts HubRepair): make it again, put this roster, watch afresh. */
  async lost(): Promise<void> {
    if (!this.kv || this.stopped) return;
    try {
      this.kv = await this.open();
      await this.beat?.();
    } catch {
      // the next beat tries again
    }
    this.restart();
  }

  private beat: (() => Promise<void>) | null = null;

  async start(stop: () => boolean): Promise<void> {
    while (!this.kv && !stop() && !this.stopped) {
      try {
        this.kv = await this.open();
      } catch (err) {
        this.log(`attend relay: presence bucket: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
    if (!this.kv || this.stopped) return;
    const roster = readRemoteRoster(this.root);
    roster.ttlMs = this.ttlS * 1000;
    let lastMembers = '';
    let lastPut = 0;
    const publish = async (members = this.local()) => {
      try {
        const json = JSON.stringify(members);
        await this.kv?.put(this.host, JSON.stringify({ host: this.host, at: this.now(), members }));
        lastMembers = json;
        lastPut = this.now();
      } catch (err) {
        // The hub is away: the next beat. A hub that lost its store has no bucket: make it
        // again, and ask for the hub check now, which finds what else went with it (the state
        // bucket, whose watch hears nothing and which nothing else puts to at rest).
        if (isMissingOnHub(err)) {
          this.onMissing();
          try {
            this.kv = await this.open();
          } catch {
            // still away
          }
        }
      }
    };
    this.beat = () => publish();
    await publish();
    // On change, and a slow heartbeat: the roster is looked at when its directories changed
    // (at most every EVENT_GAP_MS), and otherwise every LOOK_MS (nextLookAt); it is put when
    // it changed or when half the TTL passed since the last put. A machine at rest costs the
    // hub and every other relay one put per half TTL, and itself a look every LOOK_MS.
    const beatMs = (this.ttlS * 1000) / 2;
    let busy = false;
    let lastLook = this.now();
    let lastEventLook = -Infinity;
    let event = false;
    const arm = () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      if (this.stopped || busy) return;
      const at = nextLookAt({ lastLook, lastEventLook, lastPut, beatMs, event });
      this.timer = setTimeout(look, Math.max(0, at - this.now()));
      this.timer.unref();
    };
    const look = () => {
      this.timer = null;
      if (this.stopped) return;
      for (const w of this.dirWatches) w.ensure();
      lastLook = this.now();
      if (event) lastEventLook = lastLook;
      event = false;
      const members = this.local();
      if (JSON.stringify(members) === lastMembers && this.now() - lastPut < beatMs - BEAT_SLACK_MS) return arm();
      busy = true;
      void publish(members).finally(() => {
        busy = false;
        arm();
      });
    };
    const changed = (name: string | null) => {
      // A temporary (a dot-file) is followed by its rename into place, which is what counts.
      if (name?.startsWith('.') || event) return;
      event = true;
      arm();
    };
    this.dirWatches = this.rosterDirs.map((d) => new DirWatch(d, changed));
    arm();
    // Refresh `seen` only from puts received here; the watcher re-opens after a reconnect.
    while (!this.stopped) {
      try {
        const w = await this.kv.watch();
        this.watching = w;
        for await (const e of w) {
          if (this.stopped) break;
          if (e.key === this.host) continue;
          const before = JSON.stringify(roster.hosts[e.key]?.members ?? null);
          if (e.operation !== 'PUT') {
            delete roster.hosts[e.key];
          } else {
            try {
              const v = JSON.parse(new TextDecoder().decode(e.value)) as { members?: RemoteMember[] };
              roster.hosts[e.key] = { seen: this.now(), members: (v.members ?? []).map((m) => ({ ...m, host: e.key })) };
            } catch {
              // not ours: ignore
            }
          }
          roster.updated = this.now();
          // A change of who is where is written at once; a beat that only says "still here"
          // is coalesced (with ten machines every relay hears several a second).
          if (JSON.stringify(roster.hosts[e.key]?.members ?? null) !== before) {
            this.write(roster);
            this.remember(e.key, roster.hosts[e.key]?.members ?? []);
          } else this.writeSoon(roster);
        }
        this.watching = null;
        // A watch that ends at once (the hub is away) must not spin.
        await new Promise((r) => setTimeout(r, 500));
      } catch (err) {
        // The bucket is gone under a live connection: ask for the hub check now (as SharedState).
        if (isMissingOnHub(err)) this.onMissing();
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  /**
   * After a reconnect. A watch whose bucket went with the hub's store never hears again (its
   * consumer is gone and is not made again), so it is started over; the new one fails until
   * the next beat (this relay's or another's) has made the bucket again, then gets every
   * roster afresh.
   */
  restart(): void {
    this.watching?.stop();
  }

  /**
   * Members another machine announces are parties this bus has known (issue 21 item 1): kept
   * with their host, so they stay addressable after their machine leaves the hub (a relay that
   * stops says goodbye, and its roster is dropped here), and the hub holds their mail.
   */
  private remember(host: string, members: RemoteMember[]): void {
    if (members.length === 0) return;
    rememberParties(this.root, members.map((m) => ({ id: qualifyId(m.id, host), kind: m.kind, name: m.name, origin: m.origin, host })), this.now());
  }

  private lastWrite = 0;
  private soon: NodeJS.Timeout | null = null;

  private write(roster: RemoteRoster): void {
    if (this.soon) clearTimeout(this.soon);
    this.soon = null;
    this.lastWrite = this.now();
    try {
      writeRemoteRoster(this.root, roster);
    } catch (err) {
      this.log(`attend relay: cannot write the remote roster: ${(err as Error).message}`);
    }
  }

  /**
   * Within a quarter of the TTL, so a host's `seen` on disk never lags enough to age it out;
   * no sooner, since with ten machines a beat arrives every second or two and each write is a
   * file renamed into place.
   */
  private writeSoon(roster: RemoteRoster): void {
    const gap = (this.ttlS * 1000) / 4;
    const due = this.lastWrite + gap - this.now();
    if (due <= 0) return this.write(roster);
    if (this.soon) return;
    this.soon = setTimeout(() => this.write(roster), due);
    this.soon.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.dirWatches) w.close();
    if (this.soon) clearTimeout(this.soon);
    try {
      await this.kv?.delete(this.host);
    } catch {
      // gone anyway within the TTL
    }
  }
}
