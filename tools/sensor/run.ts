// `attend run`: the long-running sensor Claude Code's Monitor starts (docs/architecture.md, "Delivery",
// docs/integration.md). Every stdout line is an event for the model, so stdout carries
// observation lines only; diagnostics go to stderr.
//
// Lifetime: one sensor per session (a claim file); it heartbeats, follows `/clear` to the new
// session id, and exits when its Claude process is gone, when stdout is closed (EPIPE on a
// write, or the reader probe on a tick while idle: tools/sensor/reader-probe.ts), or on
// SIGTERM/SIGINT/SIGHUP (Monitor's expiry) — so a re-armed Monitor never leaves an orphan.

import { unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Identity, ProcInfo } from '../identity/resolve.js';
import { processAlive, readSessionRecordFile } from '../identity/system.js';
import { channelsFile } from '../bus/channels/index.js';
import { fileStamp } from '../bus/store/index.js';
import { moveLedger, readLedger } from '../bus/delivery/index.js';
import { claimSensor, moveSensorClaim, releaseSensor } from '../bus/delivery/index.js';
import { scopeDir, scopeLabel } from '../bus/store/index.js';
import { removePresence, writePresence } from '../bus/presence/index.js';
import { receiveScopes } from '../bus/delivery/index.js';
import { handOver } from '../bus/delivery/index.js';
import type { Reporter } from '../bus/store/index.js';
import { createNameSource } from '../bus/presence/index.js';
import { knownNamesSource } from '../bus/presence/index.js';
import { type NameLookup, nameLookup } from '../wire/party.js';
import { type DirWatch, watchDirs } from './dir-watch.js';
import { scanOnce } from './scan.js';
import { INDEX_NAME, SETTLE_MS } from '../bus/store/index.js';

export const HEARTBEAT_MS = 30_000;
const TICK_MS = 2_000;
const PROBE_WAIT_MS = 2_000;
const CLAIM_WAIT_MS = 3_000;

export interface SensorOptions {
  root: string;
  sessionsDir: string;
  identity: Identity;
  env: Readonly<Record<string, string | undefined>>;
  pid: number;
  now(): number;
  reporter: Reporter;
  procInfo(pid: number): ProcInfo | null;
  write(line: string): void;
  warn(line: string): void;
  poll: boolean;
  pollIntervalMs: number;
  trace: boolean;
  /** True once stdout's reader is gone; checked every tick, so an idle sensor notices too. */
  readerGone?: (() => boolean) | undefined;
  /** Resolves when the sensor should stop (signals); injected so tests can stop it. */
  stopSignal?: Promise<void>;
  /** Called once the sensor is up and has delivered what was waiting (the CLI: steadyState). */
  started?: () => void;
}

export interface SensorExit {
  reason: 'claude-gone' | 'stdout-closed' | 'signal' | 'already-running';
  delivered: number;
}

function displayNames(opts: SensorOptions): (me: string) => NameLookup {
  const source = createNameSource({ root: opts.root, sessionsDir: opts.sessionsDir, procInfo: opts.procInfo }, opts.now);
  // Parties no longer live keep their last known name, marked gone (issue #10 item 16).
  const known = knownNamesSource(opts.root);
  return (me) => nameLookup(source(), me, known());
}

export async function runSensor(opts: SensorOptions): Promise<SensorExit> {
  let who = opts.identity;
  const root = opts.root;

  // Follow a /clear that happened before this sensor started (the same hand-over as the
  // drain and the MCP channel push).
  handOver(root, who, opts.env);

  let claim = claimSensor(root, who.id, opts.pid);
  // A Monitor re-armed right after its predecessor expired: give the old sensor a moment to go.
  const claimDeadline = opts.now() + CLAIM_WAIT_MS;
  while (!claim.ok && opts.now() < claimDeadline) {
    await delay(100);
    claim = claimSensor(root, who.id, opts.pid);
  }
  if (!claim.ok) {
    opts.write(`[attend] a sensor is already running for this session (pid ${claim.owner.pid}); this one exits`);
    return { reason: 'already-running', delivered: 0 };
  }

  const warm = readLedger(root, who.id).state === 'ok';
  const names = displayNames(opts);
  let delivered = 0;
  let stopping: SensorExit['reason'] | undefined;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const stop = (reason: SensorExit['reason']) => {
    stopping ??= reason;
    wake();
  };
  void opts.stopSignal?.then(() => stop('signal'));

  const scopesLabel = () => receiveScopes(root, who).map((s) => (s.kind === 'tray' ? 'your tray' : scopeLabel(s))).join(', ');
  const heartbeat = () => {
    try {
      writePresence(root, { id: who.id, kind: who.kind, origin: who.origin, heartbeat: opts.now(), pid: opts.pid, role: 'sensor' });
    } catch (err) {
      opts.warn(`attend: heartbeat failed: ${(err as Error).message}`);
    }
  };

  // Nothing on start (issue #11 §7): every stdout line wakes the model, and on a quiet bus a
  // start banner would cost a turn before the user typed anything. The banner rides along with
  // the first line worth a wake instead, in the same Monitor batch.
  const me = names(who.id).name(who.id);
  let banner: string | null = warm
    ? `[attend] sensor resumed for ${me}: watching ${scopesLabel()}; nothing already delivered is repeated`
    : `[attend] sensor started for ${me}: watching ${scopesLabel()}`;
  const write = (line: string) => {
    if (banner !== null) {
      const first = banner;
      banner = null;
      opts.write(first);
    }
    opts.write(line);
  };
  heartbeat();
  if (stopping) {
    releaseSensor(root, who.id, opts.pid);
    removePresence(root, who.id, 'sensor');
    return { reason: stopping, delivered };
  }

  let scanQueued = false;
  const scan = () => {
    scanQueued = false;
    if (stopping) return;
    const renamesBefore = renames;
    try {
      const r = scanOnce({ root, now: opts.now, reporter: opts.reporter, names, write, warn: opts.warn, trace: opts.trace ? opts.warn : undefined }, who);
      delivered += r.delivered.length;
      if (r.closed) stop('stdout-closed');
      else if (r.later) requestScan();
      if (r.unsettled) settleScan();
      // Every rename seen before this scan began is explained by the index: no look needed.
      else if (renames === renamesBefore && settleTimer) {
        clearTimeout(settleTimer);
        settleTimer = undefined;
      }
    } catch (err) {
      // A lock timeout or a full disk must not kill the sensor: the next wake retries.
      opts.warn(`attend: scan failed: ${(err as Error).message}`);
    }
  };
  const requestScan = () => {
    if (scanQueued) return;
    scanQueued = true;
    setImmediate(scan);
  };
  // A look once a change has had SETTLE_MS to get its index line: a message written without
  // one (another tool, an older attend) is found by the full listing that follows.
  let settleTimer: NodeJS.Timeout | undefined;
  let renames = 0;
  const settleScan = () => {
    if (settleTimer || stopping) return;
    settleTimer = setTimeout(() => {
      settleTimer = undefined;
      requestScan();
    }, SETTLE_MS + 5);
  };

  // ---- watching: the receive directories and the state directory (channels.json), one
  // watch each, whatever the history (tools/sensor/dir-watch.ts).
  let usePolling = opts.poll;
  let watcher: DirWatch | undefined;
  let sawProbe = false;
  const probeName = `.attend-probe-${opts.pid}`;
  const stDir = dirname(channelsFile(root));
  const dirsOf = () => [...receiveScopes(root, who).map((s) => scopeDir(root, s)), stDir];
  const onEntry = (dir: string, name: string | null) => {
    if (dir === stDir) {
      if (name === probeName) sawProbe = true;
      else if (name === null || name === 'channels.json') void onMembership();
      return;
    }
    // An indexed writer's line comes right after its rename: scan on the line, so the scan
    // finds the index explaining the change. The rename alone only arms the settle look.
    if (name === null || name === INDEX_NAME) requestScan();
    else if (name.endsWith('.signal')) {
      renames++;
      settleScan();
    }
  };
  const startWatcher = async (): Promise<void> => {
    // Once stopping, a late membership event must not open a watch nobody will close: an
    // open watch handle would keep the process alive after it was told to go.
    if (stopping) return;
    if (!watcher) watcher = watchDirs({ poll: usePolling, intervalMs: opts.pollIntervalMs, onEntry, warn: opts.warn });
    watcher.set(dirsOf());
  };
  const restartPolling = () => {
    watcher?.close();
    watcher = undefined;
    usePolling = true;
    return startWatcher();
  };
  let membershipStamp = fileStamp(channelsFile(root));
  let watchingLabel = scopesLabel();
  const onMembership = async () => {
    membershipStamp = fileStamp(channelsFile(root));
    const label = scopesLabel();
    if (label !== watchingLabel) {
      watchingLabel = label;
      opts.warn(`attend: now watching ${label}`);
    }
    requestScan();
    try {
      await startWatcher();
    } catch (err) {
      // Never fatal: the 30 s rescan and the membership tick still deliver.
      opts.warn(`attend: could not restart the watcher: ${(err as Error).message}`);
    }
    requestScan();
  };

  await startWatcher();
  if (!usePolling) {
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
      opts.warn('attend: native file events are not delivered here; falling back to polling');
      await restartPolling();
    }
  }
  // Messages written while the watcher was starting.
  scan();
  opts.started?.();

  // ---- ticks: liveness, /clear, membership fallback, heartbeat
  let lastBeat = opts.now();
  const tick = setInterval(() => {
    if (stopping) return;
    if (opts.readerGone?.()) return stop('stdout-closed');
    const claudePid = who.pid;
    if (who.resolved && claudePid !== undefined) {
      // The one liveness rule: a zombie, or a pid with another start time, is gone.
      if (!processAlive(claudePid, who.record?.procStart, opts.procInfo)) return stop('claude-gone');
      const rec = readSessionRecordFile(opts.sessionsDir, claudePid);
      if (rec && rec.sessionId !== who.id) {
        const old = who.id;
        who = { ...who, id: rec.sessionId, sessionId: rec.sessionId, from: `claude:${rec.sessionId}`, record: rec };
        handOver(root, who, opts.env);
        moveLedger(root, old, who.id);
        moveSensorClaim(root, old, who.id, opts.pid);
        removePresence(root, old, 'sensor');
        opts.warn(`attend: followed /clear from ${old} to ${who.id}`);
        heartbeat();
        void onMembership();
      }
    }
    const stamp = fileStamp(channelsFile(root));
    if (stamp !== membershipStamp) void onMembership();
    watcher?.check();
    if (opts.now() - lastBeat >= HEARTBEAT_MS) {
      lastBeat = opts.now();
      heartbeat();
      // A safety net for an event the watcher missed; cheap (the index hint, rarely a listing).
      requestScan();
    }
  }, TICK_MS);

  await stopped;
  clearInterval(tick);
  if (settleTimer) clearTimeout(settleTimer);
  watcher?.close();
  releaseSensor(root, who.id, opts.pid);
  removePresence(root, who.id, 'sensor');
  return { reason: stopping ?? 'signal', delivered };
}


function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
