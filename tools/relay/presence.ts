// Presence across machines: each relay puts its live roster under its host's key in a KV
// bucket whose TTL (per bucket on nats-server 2.9) ages out a machine that stopped
// refreshing; it puts on change and otherwise once per half TTL (the slow heartbeat), and writes the other hosts' rosters to relay/remote.json for the bus to read
// (tools/bus/presence/remote.ts). A host's entry counts as seen when this relay received it, on this
// machine's clock, so clock skew between machines never ages anyone out early.

import type { NatsConnection } from '@nats-io/transport-node';
import { type KV, Kvm } from '@nats-io/kv';
import { type RemoteMember, type RemoteRoster, readRemoteRoster, rememberParties, writeRemoteRoster } from '../bus/presence/index.js';
import { qualifyId } from '../wire/hosts.js';
import { isMissingOnHub } from './nats-errors.js';

export const PRESENCE_BUCKET = 'attend-presence';

/**
 * How often this machine's roster is looked at for a change (local files only, no hub): every
 * 2 s, and never less than eight times per TTL, so the slow heartbeat (half the TTL) is put
 * on time and a short TTL never ages out a host that is there.
 */
const CHECK_MS = 2_000;
export function checkEveryMs(ttlS: number): number {
  return Math.min(CHECK_MS, (ttlS * 1000) / 8);
}

export class Presence {
  private kv: KV | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private watching: { stop(): void } | null = null;

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
        // The hub is away: the next beat. A hub that lost its store has no bucket: make it again.
        if (isMissingOnHub(err)) {
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
    // On change, and a slow heartbeat: the roster here is looked at every CHECK_MS (the
    // filesystem only), and put when it changed or when half the TTL passed since the last
    // put. A machine at rest costs the hub and every other relay one put per half TTL.
    const beatMs = (this.ttlS * 1000) / 2;
    const checkMs = checkEveryMs(this.ttlS);
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      const members = this.local();
      if (JSON.stringify(members) === lastMembers && this.now() - lastPut < beatMs - checkMs / 2) return;
      busy = true;
      void publish(members).finally(() => (busy = false));
    }, checkMs);
    this.timer.unref();
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
      } catch {
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
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    try {
      await this.kv?.delete(this.host);
    } catch {
      // gone anyway within the TTL
    }
  }
}
