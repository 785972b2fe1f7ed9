// The relay's status (relay/status.json, what `attend relay status` and `attend status`
// read): one object the loops update, written out at a bounded rate.

import { type RelayStatus, writeStatus } from './store.js';

/** Rewritten at most this often while something changes. */
const BUSY_MS = 500;
/** And this often at rest: status readers judge liveness over 10 s (main.ts STATUS_FRESH_MS). */
const REST_MS = 4_000;

/**
 * Whether a status is due: always when forced (the connection changed, the relay stops),
 * never within BUSY_MS of the last write, and otherwise when it changed or REST_MS passed.
 * `shape` is the status without its timestamps.
 */
export function statusDue(now: number, force: boolean, shape: string, last: { at: number; shape: string }): boolean {
  if (force) return true;
  if (now - last.at < BUSY_MS) return false;
  return shape !== last.shape || now - last.at >= REST_MS;
}

export class StatusBoard {
  readonly status: RelayStatus;
  private last = { at: 0, shape: '' };

  constructor(
    private readonly root: string,
    private readonly now: () => number,
    init: { pid: number; host: string; hub: string; parked: number },
    /** Local messages found and not yet acknowledged by the hub (the outbound loop's backlog). */
    private readonly backlog: () => number,
    /** When the oldest of those was found, or null. */
    private readonly backlogSince: () => number | null = () => null,
  ) {
    const t = now();
    this.status = {
      pid: init.pid,
      host: init.host,
      hub: init.hub,
      connected: false,
      startedAt: t,
      updatedAt: t,
      lastContact: null,
      outboundBacklog: 0,
      inboundBacklog: null,
      published: 0,
      imported: 0,
      duplicates: 0,
      parked: init.parked,
    };
  }

  private fresh: NodeJS.Timeout | null = null;
  private keeping = false;

  /**
   * Rewrite the status REST_MS after each write while nothing else does, so readers see
   * a live relay however long its loops sleep; `stopFresh` ends it.
   */
  keepFresh(): void {
    this.keeping = true;
    this.arm();
  }

  stopFresh(): void {
    this.keeping = false;
    if (this.fresh) clearTimeout(this.fresh);
    this.fresh = null;
  }

  private arm(): void {
    if (!this.keeping) return;
    if (this.fresh) clearTimeout(this.fresh);
    this.fresh = setTimeout(() => this.save(), Math.max(0, this.last.at + REST_MS - this.now()) + 1);
    this.fresh.unref();
  }

  save(force = false): void {
    const now = this.now();
    if (!force && now - this.last.at < BUSY_MS) return;
    this.status.outboundBacklog = this.backlog();
    this.status.outboundSince = this.backlogSince();
    const { updatedAt: _u, lastContact: _c, ...rest } = this.status;
    const shape = JSON.stringify(rest);
    if (!statusDue(now, force, shape, this.last)) return;
    this.last = { at: now, shape };
    this.status.updatedAt = now;
    try {
      writeStatus(this.root, this.status);
    } catch {
      // the bus is unusable for a moment: next tick
    }
    this.arm();
  }
}
