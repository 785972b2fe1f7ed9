// The consumption ledger (spec §5): one per session, shared by the sensor, the drain and
// every other process, so a message surfaced by one conduit is never surfaced by the other.
//
// Shape: per receive directory a watermark (every id below it is consumed) plus one set of
// consumed ids above the watermarks. Ids sort by creation time (tools/wire/ids.ts), so
// consulting the ledger is string comparisons on ids; only files above
// the watermark and not in the set are ever read. A watermark only moves past ids older
// than LEDGER_GRACE_MS, because a writer's id is taken a moment before its file appears:
// the set holds what is younger, so the file stays as small as the last half minute of
// traffic however long the bus's history grows.
//
// Finding the ids above a watermark without listing the directory: each directory's index
// hint (tools/bus/dir-index.ts) is read from the byte offset the ledger remembers, and
// trusted only while it explains every change to the directory; otherwise, and at least
// every RECONCILE_MS, the directory is listed in full. A watermark never moves past what
// the last full listing saw (less the grace window), so a file the index missed is picked up
// by the next full listing instead of being taken for consumed.
//
// Every read-modify-write happens under the ledger's lock, and the scan, the delivery and
// the record happen inside one hold of it, so two conduits never surface the same message.
// Delivery comes before the record: a crash in between repeats only the messages in flight.

import { closeSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import type { Identity } from '../identity/resolve.js';
import { procInfoFromProc } from '../identity/system.js';
import { addressees } from '../wire/envelope.js';
import { idTime, isMessageId } from '../wire/ids.js';
import { writeFileAtomic } from './atomic.js';
import { type IndexState, readIndex } from './dir-index.js';
import { readChannels } from './channels.js';
import { createGate } from './gate.js';
import { scopeDir, scopeDirName, stateDir } from './layout.js';
import { withLock } from './lock.js';
import { clearOwed, readOwed } from './owed.js';
import { isForMe, receiveScopes } from './receive.js';
import { FILE_MODE, ensureDir } from './root.js';
import { type Message, type Reporter, SIGNAL_EXT, readMessage } from './signals.js';

export const LEDGER_GRACE_MS = 30_000;
/** Cold start (spec §5): addressed mail whatever its age, newest this many. */
export const COLD_ADDRESSED_MAX = 50;
/** Cold start: `#open` and channel messages younger than this are delivered. */
export const COLD_RECENT_MS = 120_000;
/** Cold start reads at most this many tray files, newest first, looking for addressed mail. */
const COLD_TRAY_READ_MAX = 500;

export interface Ledger {
  version: 1;
  sid: string;
  created: number;
  updated: number;
  /** Receive directory name → watermark: every id that sorts below it is consumed. */
  marks: Record<string, string>;
  /** Consumed ids at or above their directory's watermark. */
  above: string[];
  /** The session has been taught to answer with `attend reply`. */
  taught: boolean;
  /** Stop-hook blocks in a row (the re-entry ceiling). */
  drainRounds: number;
  /** Receive directory name → where this session is in that directory's index hint. */
  index: Record<string, IndexState>;
}

export function ledgerDir(root: string): string {
  return join(stateDir(root), 'ledger');
}

export function ledgerFile(root: string, sid: string): string {
  return join(ledgerDir(root), `${encodeURIComponent(sid)}.json`);
}

function newLedger(sid: string, now: number): Ledger {
  return { version: 1, sid, created: now, updated: now, marks: {}, above: [], taught: false, drainRounds: 0, index: {} };
}

function parseLedger(text: string): Ledger | null {
  try {
    const o = JSON.parse(text) as Partial<Ledger>;
    if (!o || o.version !== 1 || typeof o.sid !== 'string' || typeof o.marks !== 'object' || o.marks === null || !Array.isArray(o.above)) return null;
    for (const v of Object.values(o.marks)) if (typeof v !== 'string') return null;
    if (!o.above.every((x) => typeof x === 'string')) return null;
    return {
      version: 1,
      sid: o.sid,
      created: typeof o.created === 'number' ? o.created : 0,
      updated: typeof o.updated === 'number' ? o.updated : 0,
      marks: o.marks as Record<string, string>,
      above: o.above,
      taught: o.taught === true,
      drainRounds: typeof o.drainRounds === 'number' ? o.drainRounds : 0,
      index: parseIndexStates(o.index),
    };
  } catch {
    return null;
  }
}

/** Index positions are only a shortcut: anything malformed is dropped (a full listing). */
function parseIndexStates(v: unknown): Record<string, IndexState> {
  const out: Record<string, IndexState> = {};
  if (typeof v !== 'object' || v === null) return out;
  for (const [dir, st] of Object.entries(v as Record<string, Partial<IndexState>>)) {
    if (
      st &&
      typeof st.file === 'string' &&
      Number.isSafeInteger(st.off) &&
      st.off! >= 0 &&
      typeof st.mtime === 'string' &&
      /^\d{1,30}$/.test(st.mtime) &&
      typeof st.listed === 'number' &&
      Array.isArray(st.known) &&
      st.known.every((id) => typeof id === 'string' && isMessageId(id))
    )
      out[dir] = { file: st.file, off: st.off!, mtime: st.mtime, listed: st.listed, known: st.known };
  }
  return out;
}

export type LedgerRead = { state: 'missing' } | { state: 'ok'; ledger: Ledger } | { state: 'corrupt' };

export function readLedger(root: string, sid: string): LedgerRead {
  let text: string;
  try {
    text = readFileSync(ledgerFile(root, sid), 'utf8');
  } catch {
    return { state: 'missing' };
  }
  const ledger = parseLedger(text);
  return ledger ? { state: 'ok', ledger } : { state: 'corrupt' };
}

function writeLedger(root: string, ledger: Ledger): void {
  writeFileAtomic(ledgerFile(root, ledger.sid), JSON.stringify(ledger));
}

/** The smallest id string made at `ms`: every id made earlier sorts below it. */
export function idFloor(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(36).padStart(9, '0');
}

/** Ids in a directory that sort at or above `mark`, ascending. Names only: nothing is read. */
function listIdsFrom(dir: string, mark: string | undefined): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  const markName = mark === undefined ? '' : mark;
  for (const name of names) {
    // A cheap, conservative first cut on the whole name (no slicing for the history below
    // the mark), then the exact comparison on the stem.
    if (name < markName) continue;
    if (!name.endsWith(SIGNAL_EXT) || name.charCodeAt(0) === 46 /* . */) continue;
    const id = name.slice(0, -SIGNAL_EXT.length);
    if (id < markName) continue;
    if (isMessageId(id)) out.push(id);
  }
  return out.sort();
}

export interface Invited {
  channel: string;
  count: number;
  older: number;
}

export interface Pending {
  /** To surface now: for this session, not its own, not consumed. Oldest first. */
  fresh: Message[];
  /** No ledger existed (or it was rebuilt): the cold-start rule applied. */
  cold: boolean;
  /** Cold start: messages marked without being shown. */
  hidden: number;
  invited: Invited[];
  /** The ledger under the lock; the callback may change `taught` and `drainRounds`. */
  ledger: Ledger;
}

export interface TakeOptions {
  now: number;
  reporter: Reporter;
  warn(line: string): void;
}

/**
 * One delivery cycle under the ledger's lock: find what is pending for `who`, hand it to
 * `deliver`, then record what `deliver` says it consumed (plus everything that was never
 * going to be shown: other sessions' tray mail, own messages, unreadable files). If
 * `deliver` throws, nothing is recorded and the error propagates.
 */
export function takePending<T>(root: string, who: Identity, opts: TakeOptions, deliver: (p: Pending) => { consume: string[]; result: T }): T {
  const file = ledgerFile(root, who.id);
  ensureDir(ledgerDir(root));
  return withLock(`${file}.lock`, () => {
    const now = opts.now;
    const read = readLedger(root, who.id);
    let ledger: Ledger;
    let cold = false;
    if (read.state === 'ok') ledger = read.ledger;
    else {
      if (read.state === 'corrupt') {
        const aside = `${file}.corrupt-${now}`;
        try {
          renameSync(file, aside);
        } catch {
          // gone already; rebuilding is all that matters
        }
        opts.warn(`attend: the delivery ledger ${file} was not valid; moved it to ${aside} and rebuilt it (cold-start rule)`);
      }
      ledger = newLedger(who.id, now);
      cold = true;
    }
    const consumed = new Set(ledger.above);
    const marks = ledger.marks;
    const isConsumed = (dir: string, id: string) => consumed.has(id) || (marks[dir] !== undefined && id < marks[dir]!);
    const auto: string[] = [];
    const fresh: Message[] = [];
    const freshIds = new Set<string>();
    let hidden = 0;
    const listed = new Map<string, string[]>();
    const listedAt = new Map<string, number>();
    const nextIndex = new Map<string, IndexState>();
    const scopes = receiveScopes(root, who);
    // The ids at or above `mark` in one directory: from its index hint when that explains
    // every change since the last cycle, else from a full listing.
    const scanDir = (dirName: string, dir: string, mark: string | undefined): string[] => {
      const r = readIndex(dir, ledger.index[dirName], now);
      if (r.state) nextIndex.set(dirName, r.state);
      listedAt.set(dirName, r.ok ? r.state.listed : now);
      if (!r.ok) return listIdsFrom(dir, mark);
      const set = new Set<string>();
      for (const id of r.state.known) if (mark === undefined || id >= mark) set.add(id);
      for (const id of r.ids) if ((mark === undefined || id >= mark) && isMessageId(id)) set.add(id);
      return [...set].sort();
    };
    let joinedAt: Record<string, number> | undefined;
    const recentFloor = idFloor(now - COLD_RECENT_MS);

    const gate = createGate(root, who);
    const broken = gate.broken();
    if (broken !== null) opts.warn(`attend: ${broken}`);
    const take = (m: Message | null, id: string) => {
      // A held message (bad signature, refused by policy) is recorded as consumed and never
      // handed to a conduit; `attend inbox --held` lists it (tools/bus/gate.ts). Under a
      // policy that did not parse nothing is delivered and nothing is recorded.
      if (m && broken !== null && freshIds.has(id) === false && isForMe(m, who) && m.fromId !== who.id) return;
      if (!m || freshIds.has(id) || !isForMe(m, who) || m.fromId === who.id || gate.held(m) !== null) {
        auto.push(id);
        return;
      }
      freshIds.add(id);
      fresh.push(m);
    };

    for (const scope of scopes) {
      const dirName = scopeDirName(scope);
      const dir = scopeDir(root, scope);
      if (marks[dirName] === undefined && !cold && scope.kind === 'channel') {
        // Joined since the ledger began: deliver from the join on; what came before is owed
        // only through an invite (readOwed below), never as a flood.
        joinedAt ??= Object.fromEntries(
          Object.entries(readChannels(root).channels).map(([name, c]) => [name, c.members[who.id]?.joined ?? now]),
        );
        marks[dirName] = idFloor(joinedAt[scope.name] ?? now);
      }
      if (marks[dirName] === undefined) {
        // Cold start for this directory.
        const ids = scanDir(dirName, dir, undefined);
        listed.set(dirName, ids);
        if (scope.kind === 'tray') {
          let found = 0;
          let readCount = 0;
          for (let i = ids.length - 1; i >= 0; i--) {
            const id = ids[i]!;
            if (readCount >= COLD_TRAY_READ_MAX) {
              auto.push(id);
              continue;
            }
            readCount++;
            const m = readMessage(root, scope, id, opts.reporter);
            const addressed = m !== null && isForMe(m, who) && m.fromId !== who.id && (m.to === 'tray' || addressees(m.to).includes(who.id));
            if (addressed && found < COLD_ADDRESSED_MAX) {
              found++;
              take(m, id);
            } else {
              if (addressed) hidden++;
              auto.push(id);
            }
          }
        } else {
          for (const id of ids) {
            const t = idTime(id);
            if (t !== null && id < recentFloor) {
              hidden++;
              auto.push(id);
              continue;
            }
            const m = readMessage(root, scope, id, opts.reporter);
            if (m && now - m.time > COLD_RECENT_MS && m.fromId !== who.id) {
              hidden++;
              auto.push(id);
              continue;
            }
            take(m, id);
          }
        }
        continue;
      }
      const ids = scanDir(dirName, dir, marks[dirName]);
      listed.set(dirName, ids);
      for (const id of ids) {
        if (isConsumed(dirName, id) || freshIds.has(id)) continue;
        take(readMessage(root, scope, id, opts.reporter), id);
      }
    }

    const invited: Invited[] = [];
    const owed = readOwed(root, who.id);
    for (const o of owed) {
      let count = 0;
      for (const id of o.ids) {
        if (consumed.has(id) || freshIds.has(id) || !isMessageId(id)) continue;
        const m = readMessage(root, { kind: 'channel', name: o.channel }, id, opts.reporter);
        if (m && m.fromId !== who.id && gate.held(m) === null) {
          freshIds.add(id);
          fresh.push(m);
          count++;
        }
      }
      invited.push({ channel: o.channel, count, older: o.olderCount });
    }

    fresh.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : 1));
    const { consume, result } = deliver({ fresh, cold, hidden, invited, ledger });

    for (const id of auto) consumed.add(id);
    for (const id of consume) consumed.add(id);
    advanceMarks(ledger, listed, consumed, now, listedAt);
    // What each directory's index position must still offer next time: seen, not consumed.
    ledger.index = {};
    for (const [dirName, st] of nextIndex) {
      const mark = marks[dirName];
      const ids = listed.get(dirName) ?? [];
      st.known = ids.filter((id) => !consumed.has(id) && (mark === undefined || id >= mark));
      ledger.index[dirName] = st;
    }
    // A directory left behind (a channel left) loses its watermark: a later join starts
    // from the join, not from where this session left off.
    const current = new Set(scopes.map(scopeDirName));
    for (const dir of Object.keys(marks)) if (!current.has(dir)) delete marks[dir];
    const floor = Object.values(marks).reduce<string | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined) ?? '';
    ledger.above = [...consumed].filter((id) => id >= floor).sort();
    ledger.updated = now;
    writeLedger(root, ledger);
    for (const o of owed) clearOwed(root, who.id, o.channel);
    return result;
  });
}

/**
 * Move each directory's watermark up to the first id not yet consumed, but never past ids
 * younger than the grace window: a file whose id was taken earlier may still be on its way.
 * Nor past what the directory's last full listing saw (`listedAt`): between full listings
 * the ids come from the index hint, and a file it missed must stay above the watermark.
 */
function advanceMarks(ledger: Ledger, listed: Map<string, string[]>, consumed: Set<string>, now: number, listedAt: Map<string, number>): void {
  for (const [dir, ids] of listed) {
    const old = ledger.marks[dir];
    let next = idFloor(Math.min(now, listedAt.get(dir) ?? now) - LEDGER_GRACE_MS);
    for (const id of ids) {
      if (old !== undefined && id < old) continue;
      if (!consumed.has(id)) {
        if (id < next) next = id;
        break;
      }
    }
    if (old === undefined || next > old) ledger.marks[dir] = next;
  }
}

/** Change the ledger's own fields (rounds, taught) without a delivery cycle. */
export function updateLedger(root: string, sid: string, now: number, fn: (l: Ledger) => void): void {
  const file = ledgerFile(root, sid);
  ensureDir(ledgerDir(root));
  withLock(`${file}.lock`, () => {
    const read = readLedger(root, sid);
    if (read.state !== 'ok') return;
    fn(read.ledger);
    read.ledger.updated = now;
    writeLedger(root, read.ledger);
  });
}

/**
 * `/clear` gives the Claude process a new session id (spec §4): the ledger follows it, so
 * nothing already surfaced is surfaced again. A ledger already at the new id wins.
 */
export function moveLedger(root: string, fromSid: string, toSid: string): boolean {
  if (fromSid === toSid) return false;
  const from = ledgerFile(root, fromSid);
  ensureDir(ledgerDir(root));
  return withLock(`${from}.lock`, () => {
    const read = readLedger(root, fromSid);
    if (read.state !== 'ok' || readLedger(root, toSid).state === 'ok') return false;
    read.ledger.sid = toSid;
    writeLedger(root, read.ledger);
    try {
      unlinkSync(from);
    } catch {
      // already gone
    }
    return true;
  });
}

// ---------------------------------------------------------------- one sensor per session

function sensorDir(root: string): string {
  return join(stateDir(root), 'sensor');
}

export function sensorFile(root: string, sid: string): string {
  return join(sensorDir(root), `${encodeURIComponent(sid)}.pid`);
}

export interface SensorOwner {
  pid: number;
  start: string;
}

function readOwner(path: string): SensorOwner | null {
  try {
    const [pid, start] = readFileSync(path, 'utf8').trim().split(' ');
    const n = Number(pid);
    return Number.isInteger(n) && n > 0 ? { pid: n, start: start ?? '' } : null;
  } catch {
    return null;
  }
}

function ownerAlive(o: SensorOwner): boolean {
  const info = procInfoFromProc(o.pid);
  if (!info) return process.platform !== 'linux' && isRunning(o.pid);
  return o.start === '' || info.start === o.start;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The live sensor for a session, if any. */
export function readSensor(root: string, sid: string): SensorOwner | null {
  const o = readOwner(sensorFile(root, sid));
  return o && ownerAlive(o) ? o : null;
}

/**
 * Claim the session's sensor slot. A slot whose owner died (SIGKILL leaves the file behind)
 * is taken over; a live owner keeps it and the claim returns that owner.
 */
export function claimSensor(root: string, sid: string, pid: number): { ok: true } | { ok: false; owner: SensorOwner } {
  const path = sensorFile(root, sid);
  ensureDir(sensorDir(root));
  const start = procInfoFromProc(pid)?.start ?? '';
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(path, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, FILE_MODE);
      writeSync(fd, `${pid} ${start}\n`);
      closeSync(fd);
      return { ok: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(path);
    if (owner && owner.pid === pid) return { ok: true };
    if (owner && ownerAlive(owner)) return { ok: false, owner };
    // Stale: break it with a rename so two claimants cannot both delete and both create.
    try {
      renameSync(path, `${path}.stale-${pid}`);
      unlinkSync(`${path}.stale-${pid}`);
    } catch {
      // another claimant broke it first
    }
  }
  const owner = readOwner(path);
  return owner ? { ok: false, owner } : { ok: false, owner: { pid: 0, start: '' } };
}

export function releaseSensor(root: string, sid: string, pid: number): void {
  const path = sensorFile(root, sid);
  if (readOwner(path)?.pid !== pid) return;
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Move a running sensor's claim to a new session id after `/clear`. */
export function moveSensorClaim(root: string, fromSid: string, toSid: string, pid: number): boolean {
  releaseSensor(root, fromSid, pid);
  return claimSensor(root, toSid, pid).ok;
}

export interface DeliveryStatus {
  sensorRunning: boolean;
  sensorPid: number | null;
  ledger: { state: 'missing' | 'ok' | 'corrupt'; updated?: number; watermarks?: number; consumedAbove?: number; drainRounds?: number; taught?: boolean };
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
