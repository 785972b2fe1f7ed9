// What wakes the sensor: one watch per receive directory and one on the state directory
// (channels.json), whatever the history (tools/sensor/dir-watch.ts), turned into wake
// requests; membership changes re-aim the watch. Native events are proved at start (else it
// polls). The identity, the wake sinks and the warn sink are injected, so this is unit-tested
// over a temporary bus; tools/sensor/run.ts only wires it.

import { unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Identity } from '../identity/resolve.js';
import { channelsFile } from '../bus/channels/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import { fileStamp, INDEX_NAME, scopeDir } from '../bus/store/index.js';
import { scopeName } from '../wire/display.js';
import { type DirWatch, watchDirs } from './dir-watch.js';

const PROBE_WAIT_MS = 2_000;

/** The receive scopes as the banner and the "now watching" line name them. */
export function scopesLabel(root: string, who: Identity): string {
  return receiveScopes(root, who)
    .map((s) => (s.kind === 'tray' ? 'your tray' : scopeName(s)))
    .join(', ');
}

interface WatchDeps {
  root: string;
  /** Names the native-events probe file, one per sensor process. */
  pid: number;
  poll: boolean;
  pollIntervalMs: number;
  who(): Identity;
  stopping(): boolean;
  /** An index line landed (or the platform did not say which entry changed): wake now. */
  wake(): void;
  /** A message was renamed in, its index line maybe still on its way. */
  renamed(): void;
  warn(line: string): void;
}

export interface SensorWatch {
  /** Watch the receive directories; with native events, prove one arrives, else poll. */
  start(): Promise<void>;
  /** Membership may have changed: re-aim the watch and wake. */
  membershipChanged(): Promise<void>;
  /** Once a tick: the channel store's stamp (a missed event), and recreated directories. */
  tick(): void;
  close(): void;
}

export function createSensorWatch(deps: WatchDeps): SensorWatch {
  const { root } = deps;
  let usePolling = deps.poll;
  let watcher: DirWatch | undefined;
  let sawProbe = false;
  const probeName = `.attend-probe-${deps.pid}`;
  const stDir = dirname(channelsFile(root));
  const dirsOf = () => [...receiveScopes(root, deps.who()).map((s) => scopeDir(root, s)), stDir];

  const onEntry = (dir: string, name: string | null) => {
    if (dir === stDir) {
      if (name === probeName) sawProbe = true;
      else if (name === null || name === 'channels.json') void membershipChanged();
      return;
    }
    // An indexed writer's line comes right after its rename: wake on the line, so the wake
    // finds the index explaining the change. The rename alone only arms the settle look.
    if (name === null || name === INDEX_NAME) deps.wake();
    else if (name.endsWith('.signal')) deps.renamed();
  };
  const startWatcher = async (): Promise<void> => {
    // Once stopping, a late membership event must not open a watch nobody will close: an
    // open watch handle would keep the process alive after it was told to go.
    if (deps.stopping()) return;
    if (!watcher) watcher = watchDirs({ poll: usePolling, intervalMs: deps.pollIntervalMs, onEntry, warn: deps.warn });
    watcher.set(dirsOf());
  };
  const restartPolling = () => {
    watcher?.close();
    watcher = undefined;
    usePolling = true;
    return startWatcher();
  };

  let membershipStamp = fileStamp(channelsFile(root));
  let watchingLabel = scopesLabel(root, deps.who());
  const membershipChanged = async () => {
    membershipStamp = fileStamp(channelsFile(root));
    const label = scopesLabel(root, deps.who());
    if (label !== watchingLabel) {
      watchingLabel = label;
      deps.warn(`attend: now watching ${label}`);
    }
    deps.wake();
    try {
      await startWatcher();
    } catch (err) {
      // Never fatal: the 30 s rescan and the membership tick still deliver.
      deps.warn(`attend: could not restart the watcher: ${(err as Error).message}`);
    }
    deps.wake();
  };

  const start = async () => {
    await startWatcher();
    if (usePolling) return;
    // Some filesystems (network mounts, some containers) never deliver native events:
    // prove that one arrives, else fall back to polling. The proof is made in state/, beside
    // signals/ on the bus root: a file made and removed in #open would be a change its index
    // cannot explain, and every restart would cost each reader a full listing of #open.
    const probe = join(stDir, probeName);
    try {
      writeFileSync(probe, '');
      const deadline = Date.now() + PROBE_WAIT_MS;
      while (!sawProbe && Date.now() < deadline) await delay(20);
    } finally {
      try {
        unlinkSync(probe);
      } catch {
        // already gone
      }
    }
    if (!sawProbe) {
      deps.warn('attend: native file events are not delivered here; falling back to polling');
      await restartPolling();
    }
  };

  return {
    start,
    membershipChanged,
    tick: () => {
      if (fileStamp(channelsFile(root)) !== membershipStamp) void membershipChanged();
      watcher?.check();
    },
    close: () => watcher?.close(),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
