// One live conduit per session: a claim file under state/sensor/, held for the conduit's
// lifetime through the same lock mechanism as every state file (tools/bus/store/lock.ts). A
// claim whose owner died (SIGKILL leaves the file behind) is taken over; a live owner keeps it.
//
// Two conduits hold it (issue 21 §2): the sensor (`attend run` under a monitor) and the
// deliverer (`attend deliver`, posting to Claude Code's inbox socket). The sensor comes first:
// one that finds the claim held asks for it (`<sid>.want`, naming itself), and a deliverer
// that sees a live asker hands the claim over between two cycles and stands by until the
// claim is free again, so the session is never without a conduit and never has two.

import { join } from 'node:path';
import { stateDir } from '../store/layout.js';
import { ensureDir, FILE_MODE } from '../store/root.js';
import { openSync, unlinkSync } from 'node:fs';
import { writeFileAtomic } from '../store/atomic.js';
import { type LockOwner, readOwner, release, tryAcquire } from '../store/lock.js';
import { readLedger } from './ledger.js';
import type { LedgerRead } from './ledger-log.js';
import { procInfoFromProc, processAlive } from '../../identity/system.js';

function sensorDir(root: string): string {
  return join(stateDir(root), 'sensor');
}

function sensorFile(root: string, sid: string): string {
  return join(sensorDir(root), `${encodeURIComponent(sid)}.pid`);
}

type SensorOwner = LockOwner;

function wantFile(root: string, sid: string): string {
  return `${sensorFile(root, sid).slice(0, -'.pid'.length)}.want`;
}

/** A sensor asks whoever holds the session's claim (a deliverer) to hand it over. */
export function askForClaim(root: string, sid: string, pid: number): void {
  try {
    writeFileAtomic(wantFile(root, sid), `${pid} ${procInfoFromProc(pid)?.start ?? ''}`, { sync: false });
  } catch {
    // No ask, no hand-over: the sensor then says a conduit is already running.
  }
}

/** The sensor that took the claim (or gave up) withdraws its ask. */
export function withdrawClaimAsk(root: string, sid: string, pid: number): void {
  if (readOwner(wantFile(root, sid))?.pid !== pid) return;
  try {
    unlinkSync(wantFile(root, sid));
  } catch {
    // already gone
  }
}

/** Does a live process other than `pid` ask for the session's claim? (The deliverer, once a tick.) */
export function claimAsked(root: string, sid: string, pid: number): boolean {
  const o = readOwner(wantFile(root, sid));
  return o !== null && o.pid !== pid && processAlive(o.pid, o.start || undefined);
}

/** The live sensor for a session, if any. */
export function readSensor(root: string, sid: string): SensorOwner | null {
  const o = readOwner(sensorFile(root, sid));
  return o && processAlive(o.pid, o.start) ? o : null;
}

/** Claim the session's sensor slot for `pid`; a live owner keeps it and is returned. */
export function claimSensor(root: string, sid: string, pid: number): { ok: true } | { ok: false; owner: SensorOwner } {
  const r = tryAcquire(sensorFile(root, sid), { pid, reentrant: true });
  return r.ok ? r : { ok: false, owner: r.owner ?? { pid: 0, start: '', at: 0 } };
}

export function releaseSensor(root: string, sid: string, pid: number): void {
  release(sensorFile(root, sid), pid);
}

/** Move a running sensor's claim to a new session id after `/clear`. */
export function moveSensorClaim(root: string, fromSid: string, toSid: string, pid: number): boolean {
  releaseSensor(root, fromSid, pid);
  return claimSensor(root, toSid, pid).ok;
}

export interface DeliveryStatus {
  sensorRunning: boolean;
  sensorPid: number | null;
  ledger: { state: LedgerRead['state']; updated?: number; watermarks?: number; consumedAbove?: number; drainRounds?: number; taught?: boolean };
}

/** For `attend status`: is a sensor delivering to this session, and what the ledger holds. */
export function deliveryStatus(root: string, sid: string): DeliveryStatus {
  const owner = readSensor(root, sid);
  const read = readLedger(root, sid);
  const ledger: DeliveryStatus['ledger'] =
    read.state === 'ok'
      ? {
          state: 'ok',
          updated: read.ledger.updated,
          watermarks: Object.keys(read.ledger.marks).length,
          consumedAbove: read.ledger.above.length,
          drainRounds: read.ledger.drainRounds,
          taught: read.ledger.taught,
        }
      : { state: read.state };
  return { sensorRunning: owner !== null, sensorPid: owner?.pid ?? null, ledger };
}

function delivererSlot(root: string, claudePid: number): string {
  return join(sensorDir(root), `deliverer-${claudePid}.pid`);
}

/** Where a deliverer started for this Claude process writes its diagnostics (`attend doctor` reads the last line). */
export function delivererLog(root: string, claudePid: number): string {
  return join(sensorDir(root), `deliverer-${claudePid}.log`);
}

/**
 * Open a deliverer's log afresh, for its stderr. The directory is made first: on a bus where
 * no sensor has run yet it is not there, and the log, the only word on why a deliverer
 * stopped, was lost (`attend doctor` then had nothing to say).
 */
export function openDelivererLog(root: string, claudePid: number): number {
  ensureDir(sensorDir(root));
  return openSync(delivererLog(root, claudePid), 'w', FILE_MODE);
}

/**
 * One deliverer per Claude process, whatever its session id (SessionStart fires again on
 * /clear, compact and resume, while the running deliverer follows the session itself).
 */
export function claimDelivererSlot(root: string, claudePid: number, pid: number): boolean {
  return tryAcquire(delivererSlot(root, claudePid), { pid, reentrant: true }).ok;
}

export function releaseDelivererSlot(root: string, claudePid: number, pid: number): void {
  release(delivererSlot(root, claudePid), pid);
}

/** The live deliverer of a Claude process, if any. */
export function readDeliverer(root: string, claudePid: number): SensorOwner | null {
  const o = readOwner(delivererSlot(root, claudePid));
  return o && processAlive(o.pid, o.start) ? o : null;
}
