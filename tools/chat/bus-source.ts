// The operator's view of the bus, as a source of messages: the first load of the newest and
// older pages on scroll-back (source/history.ts), and live arrivals (source/arrivals.ts, over
// the store's follower) from a watch on every scope directory with a periodic rescan behind it
// (source/scope-watch.ts), handed over in batches (source/batch.ts). This file only wires
// them. Never throws into the UI from its loops: trouble becomes a status line
// (source/notices.ts).

import { readKnownNames } from '../bus/presence/index.js';
import type { Message } from '../bus/store/index.js';
import type { Reader } from '../bus/trust/index.js';
import { createArrivals } from './source/arrivals.js';
import { ARRIVAL_BATCH_MS, createBatcher } from './source/batch.js';
import { createHistory, type Page } from './source/history.js';
import { createNotices } from './source/notices.js';
import { channelDirs, createScopeWatch } from './source/scope-watch.js';
import { realTimers, type Timers } from './source/timers.js';

export { ARRIVAL_BATCH_MS };

interface SourceEvents {
  arrived(messages: Message[]): void;
  status(text: string | null): void;
  channels(names: string[]): void;
}

export interface BusSource {
  loadInitial(limit: number): Page;
  /** Messages older than the oldest loaded id, newest first up to `limit`. */
  loadOlder(limit: number): Page;
  start(events: SourceEvents): void;
  stop(): void;
  /** Channel names with a directory on the bus. */
  channelDirs(): string[];
  /** Last known names of parties no longer live (tools/bus/presence/names.ts), shown as gone. */
  knownNames?(): ReadonlyMap<string, string>;
}

interface SourceOptions {
  root: string;
  /** Rescan interval in ms, the safety net behind fs.watch. */
  rescanMs?: number;
  /** Extra channel names to list (the membership store), read at each rescan. */
  storeChannels?: () => string[];
  /** Arrivals are handed over at most this often, ms (source/batch.ts). */
  batchMs?: number;
  /** Who reads (the person at the keyboard), for the gate that holds messages back (issue 14). */
  reader: Reader;
  timers?: Timers;
  /** Wall-clock ms. */
  now?: () => number;
}

export function createBusSource(opts: SourceOptions): BusSource {
  const { root } = opts;
  const timers = opts.timers ?? realTimers;
  const now = opts.now ?? Date.now;
  // Set by start, cleared by stop: what the loops say before start or after stop goes nowhere.
  let events: SourceEvents | null = null;
  const notices = createNotices({ root, reader: opts.reader, status: (t) => events?.status(t) });
  const { reporter, admit } = notices;
  const history = createHistory({ root, now, reporter, admit });
  const batch = createBatcher<Message>({ timers, ...(opts.batchMs !== undefined ? { batchMs: opts.batchMs } : {}), deliver: (ms) => events?.arrived(ms) });
  const arrivals = createArrivals({ root, now, reporter, history, admit, arrived: (m) => batch.push(m) });
  const watch = createScopeWatch({
    root,
    timers,
    ...(opts.rescanMs !== undefined ? { rescanMs: opts.rescanMs } : {}),
    scan: arrivals.scanDir,
    file: arrivals.onFile,
    status: (t) => events?.status(t),
    channels: (names) => events?.channels([...names, ...(opts.storeChannels?.() ?? [])]),
  });

  return {
    knownNames: () => readKnownNames(root),
    loadInitial: history.loadInitial,
    loadOlder: history.loadOlder,
    start(ev) {
      events = ev;
      watch.start();
    },
    stop() {
      watch.stop();
      batch.cancel();
      history.close();
      events = null;
    },
    channelDirs: () => channelDirs(root),
  };
}
