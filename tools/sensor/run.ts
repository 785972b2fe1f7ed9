// `attend run`: the long-running sensor Claude Code's Monitor starts (docs/architecture.md, "Delivery",
// docs/integration.md). Every stdout line is an event for the model, so stdout carries
// observation lines only; diagnostics go to stderr.
//
// Lifetime: one sensor per session (a claim file, which a deliverer hands over when asked); it heartbeats, follows `/clear` to the new
// session id, and exits when its Claude process is gone, when stdout is closed (EPIPE on a
// write, or the reader probe on a tick while idle: tools/sensor/reader-probe.ts), or on
// SIGTERM/SIGINT/SIGHUP (Monitor's expiry) — so a re-armed Monitor never leaves an orphan.
//
// This file only wires the loops (style.md), each a module unit-tested over a temporary bus:
// the delivery cycle and its scheduling (delivery.ts), what wakes it (watch.ts), the watch
// on the Claude process and /clear (session-watch.ts) and the presence (heartbeat.ts).

import type { Identity, ProcInfo } from '../identity/resolve.js';
import { processAlive, readSessionRecordFile } from '../identity/system.js';
import { askForClaim, claimSensor, handOver, readLedger, releaseSensor, withdrawClaimAsk } from '../bus/delivery/index.js';
import type { Reporter } from '../bus/store/index.js';
import { createNameSource, knownNamesSource } from '../bus/presence/index.js';
import { type NameLookup, nameLookup } from '../wire/display.js';
import { createDeliveryLoop, withBanner } from './delivery.js';
import { beat, createHeartbeat, removeBeat } from './heartbeat.js';
import { checkSession } from './session-watch.js';
import { createSensorWatch, scopesLabel } from './watch.js';

const TICK_MS = 2_000;
const CLAIM_WAIT_MS = 3_000;

interface SensorOptions {
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
  /** How often it checks its reader, its Claude process and the channel store (tests shorten it). */
  tickMs?: number;
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
  // A deliverer holding the claim hands it over when asked (issue 21 §2).
  if (!claim.ok) askForClaim(root, who.id, opts.pid);
  const claimDeadline = opts.now() + CLAIM_WAIT_MS;
  while (!claim.ok && opts.now() < claimDeadline) {
    await delay(100);
    claim = claimSensor(root, who.id, opts.pid);
  }
  withdrawClaimAsk(root, who.id, opts.pid);
  if (!claim.ok) {
    opts.write(`[attend] a sensor is already running for this session (pid ${claim.owner.pid}); this one exits`);
    return { reason: 'already-running', delivered: 0 };
  }

  const warm = readLedger(root, who.id).state === 'ok';
  const names = displayNames(opts);
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
  const isStopping = () => stopping !== undefined;
  const presence = { root, pid: opts.pid, now: opts.now, warn: opts.warn };

  // Nothing on start (issue #11 §7): the banner rides along with the first line worth a wake.
  const me = names(who.id).name(who.id);
  const banner = warm
    ? `[attend] sensor resumed for ${me}: watching ${scopesLabel(root, who)}; nothing already delivered is repeated`
    : `[attend] sensor started for ${me}: watching ${scopesLabel(root, who)}`;
  const write = withBanner(opts.write, banner);
  beat(presence, who);
  if (stopping) {
    releaseSensor(root, who.id, opts.pid);
    removeBeat(presence, who);
    return { reason: stopping, delivered: 0 };
  }

  const scan = { root, now: opts.now, reporter: opts.reporter, names, write, warn: opts.warn, trace: opts.trace ? opts.warn : undefined };
  const delivery = createDeliveryLoop({ scan, who: () => who, stopping: isStopping, closed: () => stop('stdout-closed') });
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
  // Messages written while the watcher was starting.
  delivery.wake();
  opts.started?.();

  // ---- ticks: liveness, /clear, membership fallback, heartbeat
  const session = {
    root,
    env: opts.env,
    pid: opts.pid,
    alive: (pid: number, start: string | undefined) => processAlive(pid, start, opts.procInfo),
    readRecord: (pid: number) => readSessionRecordFile(opts.sessionsDir, pid),
    warn: opts.warn,
  };
  const heartbeat = createHeartbeat(presence);
  const tick = setInterval(() => {
    if (stopping) return;
    // A tick never ends the conduit on its own (issue 21 §2): a bus that vanished, a full
    // disk or a lock timeout is a warning, and the next tick tries again.
    try {
      if (opts.readerGone?.()) return stop('stdout-closed');
      const s = checkSession(session, who);
      if (s.gone) return stop('claude-gone');
      if (s.cleared !== undefined) {
        who = s.who;
        beat(presence, who);
        void watch.membershipChanged();
      }
      watch.tick();
      // A safety net for an event the watcher missed; cheap (the index hint, rarely a listing).
      if (heartbeat.due(who)) delivery.request();
    } catch (err) {
      opts.warn(`attend: tick failed: ${(err as Error).message}`);
    }
  }, opts.tickMs ?? TICK_MS);

  await stopped;
  clearInterval(tick);
  delivery.close();
  watch.close();
  releaseSensor(root, who.id, opts.pid);
  removeBeat(presence, who);
  return { reason: stopping ?? 'signal', delivered: delivery.delivered() };
}


function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
