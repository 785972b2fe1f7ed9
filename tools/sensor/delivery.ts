// The sensor's delivery cycle and its scheduling (docs/architecture.md, "Delivery"): a wake
// runs one `scanOnce` (take what is pending from the ledger -> lines), however many events
// asked for it in the same turn of the event loop; a rename seen without its index line arms
// one look after SETTLE_MS. State is explicit and the world is injected (the identity, the
// line sink, the timers), so this is unit-tested over a temporary bus; tools/sensor/run.ts
// only wires it to the watcher and the tick.

import type { Identity } from '../identity/resolve.js';
import { SETTLE_MS } from '../bus/store/index.js';
import { type ScanDeps, type ScanResult, scanOnce } from './scan.js';

interface Timers {
  soon(fn: () => void): void;
  after(ms: number, fn: () => void): unknown;
  cancel(handle: unknown): void;
}

/**
 * A wake that failed (a full disk refused its record, a lock it could not take) is tried
 * again after this, doubling up to RETRY_MAX_MS, however quiet the bus is: the conduit waits
 * and recovers (issue 21 §2, §6) rather than leave what is pending for the next message.
 */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 8_000;

const realTimers: Timers = {
  soon: (fn) => void setImmediate(fn),
  after: (ms, fn) => setTimeout(fn, ms),
  cancel: (h) => clearTimeout(h as NodeJS.Timeout),
};

interface DeliveryDeps {
  /** What one wake needs: the bus, the clock, the names, the line sink (throws on EPIPE). */
  scan: ScanDeps;
  /**
   * A wake that delivers asynchronously instead of `scanOnce` (the deliverer's socket post,
   * tools/sensor/post-wake.ts). Wakes never overlap: a request made while one runs runs
   * once it is done.
   */
  cycle?: (who: Identity) => Promise<ScanResult>;
  /** The identity now (a /clear changes it between wakes). */
  who(): Identity;
  /** True once the sensor is stopping: no wake runs and no look is armed after that. */
  stopping(): boolean;
  /** stdout closed while a wake wrote to it. */
  closed(): void;
  timers?: Timers;
}

export interface DeliveryLoop {
  /** Run a wake soon: once for every request made in the same turn of the event loop. */
  request(): void;
  /** A message file was renamed in: look again once its index line has had SETTLE_MS. */
  renamed(): void;
  /** Run a wake now. */
  wake(): void;
  /** Messages delivered so far (a digest counts each message it stands for). */
  delivered(): number;
  /** Resolves once no wake is running (the deliverer hands its claim over between wakes). */
  idle(): Promise<void>;
  /** Cancel a pending look. */
  close(): void;
}

export function createDeliveryLoop(deps: DeliveryDeps): DeliveryLoop {
  const timers = deps.timers ?? realTimers;
  let delivered = 0;
  let queued = false;
  let settleTimer: unknown;
  let renames = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let retryTimer: unknown;
  let retryMs = RETRY_FIRST_MS;
  let failing: string | undefined;
  // A failed wake warns once per kind of failure (not once per retry) and is tried again.
  const failed = (what: string, err: unknown) => {
    const line = `attend: ${what} failed: ${(err as Error).message}`;
    if (line !== failing) deps.scan.warn(line);
    failing = line;
    if (retryTimer !== undefined || deps.stopping()) return;
    retryTimer = timers.after(retryMs, () => {
      retryTimer = undefined;
      request();
    });
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };
  const recovered = () => {
    if (failing !== undefined) deps.scan.warn('attend: delivery recovered');
    failing = undefined;
    retryMs = RETRY_FIRST_MS;
  };
  const wake = () => {
    queued = false;
    if (deps.stopping()) return;
    if (running) {
      again = true;
      return;
    }
    const renamesBefore = renames;
    if (deps.cycle) {
      running = deps.cycle(deps.who()).then(
        (r) => settled(r, renamesBefore),
        (err: unknown) => failed('delivery', err),
      );
      void running.finally(() => {
        running = undefined;
        if (again) {
          again = false;
          request();
        }
      });
      return;
    }
    try {
      settled(scanOnce(deps.scan, deps.who()), renamesBefore);
    } catch (err) {
      // A lock timeout or a full disk must not kill the sensor: it tries again.
      failed('scan', err);
    }
  };
  const settled = (r: ScanResult, renamesBefore: number) => {
    recovered();
    delivered += r.delivered.length;
    if (r.closed) deps.closed();
    else if (r.later) request();
    if (r.unsettled) settle();
    // Every rename seen before this wake began is explained by the index: no look needed.
    else if (renames === renamesBefore && settleTimer !== undefined) {
      timers.cancel(settleTimer);
      settleTimer = undefined;
    }
  };
  const request = () => {
    if (queued) return;
    queued = true;
    timers.soon(wake);
  };
  // A look once a change has had SETTLE_MS to get its index line: a message written without
  // one (another tool, an older attend) is found by the full listing that follows.
  const settle = () => {
    if (settleTimer !== undefined || deps.stopping()) return;
    settleTimer = timers.after(SETTLE_MS + 5, () => {
      settleTimer = undefined;
      request();
    });
  };

  return {
    request,
    renamed: () => {
      renames++;
      settle();
    },
    wake,
    delivered: () => delivered,
    idle: () => running ?? Promise.resolve(),
    close: () => {
      if (settleTimer !== undefined) timers.cancel(settleTimer);
      settleTimer = undefined;
      if (retryTimer !== undefined) timers.cancel(retryTimer);
      retryTimer = undefined;
    },
  };
}

/**
 * The line sink with the start banner riding along with the first line (issue #11 §7): every
 * stdout line wakes the model, and on a quiet bus a banner of its own would cost a turn before
 * the user typed anything.
 */
export function withBanner(write: (line: string) => void, banner: string): (line: string) => void {
  let pending: string | null = banner;
  return (line) => {
    if (pending !== null) {
      const first = pending;
      pending = null;
      write(first);
    }
    write(line);
  };
}
