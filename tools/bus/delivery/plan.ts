// What a delivery cycle would surface, as a pure plan over what the IO shell read
// (tools/bus/delivery/ledger.ts takePending): the ledger, each receive directory's ids, the owed
// backlog, and a reader for one message. No file is touched here (issue #9 §3), so the
// cold-start and warm rules are testable without a bus, and the shell stays small.

import type { Identity } from '../../identity/resolve.js';
import type { Scope } from '../../wire/envelope.js';
import { idTime, isMessageId } from '../../wire/ids.js';
import { isAddressedTo, maySee } from '../../wire/visibility.js';
import type { IndexState } from '../store/dir-index.js';
import type { OwedEntry } from './owed.js';
import type { Message } from '../store/messages.js';
import { idFloor } from '../../wire/ids.js';

export const LEDGER_GRACE_MS = 30_000;
/** Cold start (docs/architecture.md, "Delivery"): addressed mail whatever its age, newest this many. */
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
  /**
   * Late arrivals (DirListing.late) consumed in the last LEDGER_GRACE_MS, with when: below
   * the watermark, so `above` does not keep them, but a line read again (an unsettled
   * index, a copy in a second directory) must not deliver them twice.
   */
  late?: Record<string, number>;
  /**
   * The newest message from someone else a conduit surfaced, which `attend reply` threads to
   * by default. Kept here, in the file each cycle writes anyway, so a delivery costs one
   * write instead of two (issue #12 §3); listings keep theirs in state/surfaced/.
   */
  shown?: Shown;
  /**
   * Consumed, then given back (issue 21 §2): the messages of a deliverer post that drew a
   * held, refused or dropped receipt after the post was recorded. Pending again for every
   * conduit, whatever the watermark says, until one takes them; each with its directory.
   */
  back?: BackEntry[];
  /**
   * Which conduit showed what (issue 24): per conduit, the ids its confirmed wakes showed,
   * the newest VIA_MAX ids of all kept (oldest first in each). Taken from the in-flight
   * record's `by` as a wake is confirmed; a ledger from before it was kept has none.
   */
  via?: Record<string, string[]>;
}

/** A conduit's name as the ledger keeps it (a short label of attend's own: `sensor`, `Stop hook`). */
export const isConduit = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z][A-Za-z -]{0,23}$/.test(v);

/** How many shown ids the ledger keeps the conduit of: a sent list's worth, a small line. */
export const VIA_MAX = 128;

/** Note that conduit `by` showed `ids` (a wake confirmed, or folded in as shown while its owner lives). */
export function noteVia(ledger: Ledger, by: string | undefined, ids: readonly string[]): void {
  if (by === undefined || ids.length === 0) return;
  const via = (ledger.via ??= Object.create(null) as Record<string, string[]>);
  const have = new Set(via[by] ?? []);
  via[by] = [...(via[by] ?? []), ...ids.filter((id) => !have.has(id))];
  const all: [string, string][] = [];
  for (const [c, xs] of Object.entries(via)) for (const id of xs) all.push([id, c]);
  if (all.length <= VIA_MAX) return;
  all.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const next = Object.create(null) as Record<string, string[]>;
  for (const [id, c] of all.slice(-VIA_MAX)) (next[c] ??= []).push(id);
  ledger.via = next;
}

/** The conduit the ledger says showed `id`, if it kept it. */
export function viaOf(ledger: Pick<Ledger, 'via'>, id: string): string | undefined {
  for (const [c, xs] of Object.entries(ledger.via ?? {})) if (xs.includes(id)) return c;
  return undefined;
}

export interface BackEntry {
  id: string;
  dir: string;
}

export interface Shown {
  id: string;
  time: number;
}

/** Record `m` as the newest shown unless something newer already is. */
export function noteShown(ledger: Ledger, m: Shown): void {
  const prev = ledger.shown;
  if (prev && (prev.time > m.time || (prev.time === m.time && prev.id >= m.id))) return;
  ledger.shown = { id: m.id, time: m.time };
}

/**
 * Whether `ledger` counts message `id` of directory `dirName` consumed: below the directory's
 * watermark, or in the consumed set above it. Consumed is not the same as shown (a cold
 * start marks history without showing it; tools/bus/delivery/shown.ts tells them apart).
 */
export function consumedIn(ledger: Pick<Ledger, 'marks' | 'above' | 'back'>, dirName: string, id: string): boolean {
  if (ledger.back?.some((b) => b.id === id)) return false;
  const mark = ledger.marks[dirName];
  return (mark !== undefined && id < mark) || ledger.above.includes(id);
}

export function newLedger(sid: string, now: number): Ledger {
  return { version: 1, sid, created: now, updated: now, marks: {}, above: [], taught: false, drainRounds: 0, index: {} };
}

export function parseLedger(text: string): Ledger | null {
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
      // Ids are text from files: a record without a prototype, so `__proto__` is just an id.
      ...(isLate(o.late) ? { late: Object.assign(Object.create(null) as Record<string, number>, o.late) } : {}),
      ...(isShown(o.shown) ? { shown: { id: o.shown.id, time: o.shown.time } } : {}),
      ...(isBack(o.back) ? { back: o.back.map((b) => ({ id: b.id, dir: b.dir })) } : {}),
      ...(isVia(o.via) ? { via: Object.assign(Object.create(null) as Record<string, string[]>, o.via) } : {}),
    };
  } catch {
    return null;
  }
}

function isLate(v: unknown): v is Record<string, number> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.entries(v).every(([k, t]) => isMessageId(k) && typeof t === 'number');
}

function isBack(v: unknown): v is BackEntry[] {
  return Array.isArray(v) && v.length > 0 && v.every((b: Partial<BackEntry> | null) => typeof b === 'object' && b !== null && typeof b.id === 'string' && isMessageId(b.id) && typeof b.dir === 'string');
}

function isVia(v: unknown): v is Record<string, string[]> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.entries(v).every(([c, xs]) => isConduit(c) && Array.isArray(xs) && xs.every((id) => typeof id === 'string' && isMessageId(id)));
}

function isShown(v: unknown): v is Shown {
  const o = v as Partial<Shown> | null | undefined;
  return typeof o === 'object' && o !== null && typeof o.id === 'string' && isMessageId(o.id) && typeof o.time === 'number';
}

function isNameSum(v: unknown): v is NonNullable<IndexState['lsum']> {
  const o = v as Partial<NonNullable<IndexState['lsum']>> | null | undefined;
  return typeof o === 'object' && o !== null && Number.isSafeInteger(o.n) && Number.isSafeInteger(o.h) && typeof o.at === 'string' && /^\d{1,30}$/.test(o.at);
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
      out[dir] = {
        file: st.file,
        off: st.off!,
        mtime: st.mtime,
        listed: st.listed,
        known: st.known,
        ...(typeof st.lmark === 'string' && Number.isSafeInteger(st.loff) && st.loff! >= 0 && Array.isArray(st.lseen) && st.lseen.every((id) => typeof id === 'string')
          ? { lmark: st.lmark, loff: st.loff!, lseen: st.lseen }
          : {}),
        ...(isNameSum(st.lsum) ? { lsum: { n: st.lsum.n, h: st.lsum.h, at: st.lsum.at } } : {}),
        ...(Array.isArray(st.lraced) && st.lraced.every((id) => typeof id === 'string' && isMessageId(id)) ? { lraced: st.lraced } : {}),
      };
  }
  return out;
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
  /** A receive directory changed in a way its index does not explain yet: look again after SETTLE_MS. */
  unsettled?: boolean;
  /**
   * Files this pass left unverified past its cap (tools/bus/trust/held.ts): neither shown nor
   * consumed. A conduit that runs on events looks again at once, or they would wait for the
   * next message.
   */
  unchecked?: number;
  /**
   * With deferred verification (TakeOptions.verify 'presented'): the full check, signature
   * included, which the conduit must pass for every message it presents; `fresh` was
   * checked against policy only.
   */
  check?: (m: Message) => string | null;
}

/** One receive directory as the shell read it. */
export interface DirListing {
  scope: Scope;
  dirName: string;
  /** Ids at or above the directory's watermark (all of them on a cold start), ascending. */
  ids: string[];
  /** Cold start of #open or a channel: valid ids older than the cold-start window, counted, not listed. */
  older?: number;
  /**
   * Ids below the watermark that arrived since the last cycle (issue 21 §4/3: noticed by
   * their arrival, never by their ids): named for the first time by the index hint (a relay
   * importing after an outage, a writer whose id was taken long before its rename), or found
   * by a full listing that the previous one did not see (a file written without an index
   * line), and those still waiting from an earlier cycle. Delivered unless Ledger.late says
   * they were consumed already.
   */
  late?: string[];
  /**
   * For a directory with more new ids than a reader verifies in one pass: the ids that have
   * a signature beside them (issue 20, attack 9). They are read first — in a tray's
   * cold-start window too — so hand-written lines (which carry none) cannot push a genuine
   * message out of a pass however many there are.
   */
  signed?: ReadonlySet<string>;
  /** Where the ledger is in the directory's index hint after this read. */
  index?: IndexState | undefined;
  /** A change the index does not explain yet (a line on its way): look again shortly. */
  unsettled?: boolean;
}

interface PendingPlan {
  /** To surface now: for this identity, not its own, not consumed. Oldest first. */
  fresh: Message[];
  /** Never going to be shown (own messages, a sibling's tray mail, unreadable, cold-hidden): recorded as consumed. */
  auto: string[];
  /** Cold start: messages marked without being shown. */
  hidden: number;
  invited: Invited[];
}

/**
 * The watermark a directory joined since the ledger began starts from: the join. What came
 * before is owed only through an invite, never as a flood. Applied by the shell before it
 * lists, so the listing starts there too.
 */
export function joinMark(joined: number | undefined, now: number): string {
  return idFloor(joined ?? now);
}

export function planPending(
  ledger: Ledger,
  dirs: DirListing[],
  owed: OwedEntry[],
  who: Identity,
  now: number,
  /** One message through the gate: null when held or unreadable (consumed), undefined when not checked yet (left pending). */
  read: (scope: Scope, id: string) => Message | null | undefined,
): PendingPlan {
  const consumed = consumedAbove(ledger.above);
  const marks = ledger.marks;
  const isConsumed = (dir: string, id: string) => consumed.has(id) || (marks[dir] !== undefined && id < marks[dir]!);
  const auto: string[] = [];
  const fresh: Message[] = [];
  const freshIds = new Set<string>();
  let hidden = 0;
  const recentFloor = idFloor(now - COLD_RECENT_MS);
  const take = (m: Message | null | undefined, id: string) => {
    if (m === undefined) return;
    if (!m || freshIds.has(id) || !maySee(m.scope, m, who.id) || m.fromId === who.id) {
      auto.push(id);
      return;
    }
    freshIds.add(id);
    fresh.push(m);
  };

  const lateDone = new Set(Object.keys(ledger.late ?? {}));
  for (const { scope, dirName, ids, older, late, signed } of dirs) {
    if (marks[dirName] !== undefined) {
      // Signed files first, so a flood left unchecked past the reader's cap is the unsigned one.
      for (const id of signed ? [...ids.filter((x) => signed.has(x)), ...ids.filter((x) => !signed.has(x))] : ids) {
        if (isConsumed(dirName, id) || freshIds.has(id)) continue;
        take(read(scope, id), id);
      }
      for (const id of late ?? []) {
        if (consumed.has(id) || lateDone.has(id) || freshIds.has(id)) continue;
        take(read(scope, id), id);
      }
      continue;
    }
    // Cold start for this directory.
    if (scope.kind === 'tray') {
      // Addressed mail whatever its age, newest COLD_ADDRESSED_MAX, reading at most
      // COLD_TRAY_READ_MAX files: the signed ones newest first, then the rest newest first,
      // so a flood of unsigned lines cannot crowd a genuine message out of the window.
      let found = 0;
      let readCount = 0;
      const order = signed ? [...ids.filter((id) => !signed.has(id)), ...ids.filter((id) => signed.has(id))] : ids;
      for (let i = order.length - 1; i >= 0; i--) {
        const id = order[i]!;
        if (readCount >= COLD_TRAY_READ_MAX) {
          auto.push(id);
          continue;
        }
        readCount++;
        const m = read(scope, id);
        if (m === undefined) continue;
        // Addressed to this session, which makes it the session's to see (tools/wire/visibility.ts).
        const addressed = m !== null && m.fromId !== who.id && isAddressedTo(m, who.id);
        if (addressed && found < COLD_ADDRESSED_MAX) {
          found++;
          take(m, id);
        } else {
          if (addressed) hidden++;
          auto.push(id);
        }
      }
      continue;
    }
    // #open and channels: what is younger than COLD_RECENT_MS (what is older may have been
    // counted by the shell without being listed).
    hidden += older ?? 0;
    for (const id of ids) {
      if (idTime(id) !== null && id < recentFloor) {
        hidden++;
        auto.push(id);
        continue;
      }
      const m = read(scope, id);
      if (m === undefined) continue;
      if (m && now - m.time > COLD_RECENT_MS && m.fromId !== who.id) {
        hidden++;
        auto.push(id);
        continue;
      }
      take(m, id);
    }
  }

  // Given back after a conduit recorded them: pending again, whatever the watermark says. In a
  // directory no longer received (a channel left since), there is nothing to show.
  for (const b of ledger.back ?? []) {
    if (freshIds.has(b.id)) continue;
    const d = dirs.find((x) => x.dirName === b.dir);
    if (d) take(read(d.scope, b.id), b.id);
    else auto.push(b.id);
  }

  const invited: Invited[] = [];
  for (const o of owed) {
    let count = 0;
    for (const id of o.ids) {
      if (consumed.has(id) || freshIds.has(id) || !isMessageId(id)) continue;
      const m = read({ kind: 'channel', name: o.channel }, id);
      if (m && m.fromId !== who.id) {
        freshIds.add(id);
        fresh.push(m);
        count++;
      }
    }
    invited.push({ channel: o.channel, count, older: o.olderCount });
  }
  fresh.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : 1));
  return { fresh, auto, hidden, invited };
}

/**
 * Record a cycle in the ledger: what was consumed (delivered, or never to be shown), each
 * directory's watermark moved up as far as it may go, the index positions, and only the
 * consumed ids above the lowest watermark kept.
 */
export function recordConsumed(ledger: Ledger, dirs: DirListing[], consumed: Iterable<string>, now: number): void {
  const took = new Set(consumed);
  const above = sortedUnique(ledger.above);
  const was = consumedAbove(above);
  const added = [...took].filter((id) => !was.has(id)).sort();
  const set = { has: (id: string) => took.has(id) || was.has(id) };
  const listed = new Map(dirs.map((d) => [d.dirName, d.ids]));
  advanceMarks(ledger, listed, set, now);
  const marks = ledger.marks;
  // What each directory's index position must still offer next time: seen, not consumed.
  ledger.index = {};
  for (const d of dirs) {
    if (!d.index) continue;
    const mark = marks[d.dirName];
    // Late arrivals consumed now are remembered for the grace window; those not yet
    // consumed (more than one wake shows) stay known, below the watermark or not.
    for (const id of d.late ?? []) if (set.has(id)) (ledger.late ??= Object.create(null) as Record<string, number>)[id] = now;
    const late = new Set(d.late);
    d.index.known = [...d.ids, ...late].filter((id) => !set.has(id) && !(ledger.late && id in ledger.late) && (mark === undefined || id >= mark || late.has(id)));
    ledger.index[d.dirName] = d.index;
  }
  // A directory left behind (a channel left) loses its watermark: a later join starts from
  // the join, not from where this session left off.
  const current = new Set(dirs.map((d) => d.dirName));
  for (const dir of Object.keys(marks)) if (!current.has(dir)) delete marks[dir];
  const floor = Object.values(marks).reduce<string | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined) ?? '';
  const all = mergeSorted(above, added);
  ledger.above = all.slice(lowerBound(all, floor));
  ascending.set(ledger.above, ledger.above);
  if (ledger.late) {
    for (const [id, at] of Object.entries(ledger.late)) if (now - at > LEDGER_GRACE_MS || at > now) delete ledger.late[id];
    if (Object.keys(ledger.late).length === 0) delete ledger.late;
  }
  if (ledger.back) {
    ledger.back = ledger.back.filter((b) => !took.has(b.id));
    if (ledger.back.length === 0) delete ledger.back;
  }
  ledger.updated = now;
}

/** Add what a conduit gives back to the ledger's pending-again list (each id once). */
export function noteBack(ledger: Ledger, back: readonly BackEntry[]): void {
  const have = new Set((ledger.back ?? []).map((b) => b.id));
  const add = back.filter((b) => !have.has(b.id));
  if (add.length > 0) ledger.back = [...(ledger.back ?? []), ...add];
}

/**
 * Move each directory's watermark up to the first id not yet consumed, but never past ids
 * younger than the grace window: a file whose id was taken earlier may still be on its way.
 * Between full listings the ids come from the index hint; a file it missed and the
 * watermark passed is found by the next full listing (DirListing.late), so the watermark
 * need not wait for one and the consumed set stays as small as the grace window.
 */
function advanceMarks(ledger: Ledger, listed: Map<string, string[]>, consumed: { has(id: string): boolean }, now: number): void {
  for (const [dir, ids] of listed) {
    const old = ledger.marks[dir];
    let next = idFloor(now - LEDGER_GRACE_MS);
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

/*
 * The consumed set above the watermarks holds every id of the grace window (LEDGER_GRACE_MS):
 * at a high rate, thousands. Every cycle asks it about a few ids and adds a few, so it is
 * kept ascending and each once (as recordConsumed writes it) and searched, not made into a
 * Set and sorted again each time (issue 25: that was a third of a millisecond per wake, on
 * the path to the line, with 1,500 ids in the window).
 */

/**
 * Each list seen, with its ids ascending and each once (itself when it already was; every
 * list recordConsumed makes). A ledger's `above` is replaced, never changed in place, so what
 * is found here still holds; comparing the ids to find that out again cost as much as the
 * sort (long shared prefixes), and a list read from disk in another order is sorted once per
 * cycle, not once by the plan and again by each record.
 */
const ascending = new WeakMap<readonly string[], string[]>();

/** `ids` ascending, each once: as given when it already is (a ledger read from disk may be in any order). */
function sortedUnique(ids: string[]): string[] {
  const known = ascending.get(ids);
  if (known !== undefined) return known;
  let out = ids;
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i - 1]! < ids[i]!)) {
      out = [...new Set(ids)].sort();
      break;
    }
  }
  ascending.set(ids, out);
  ascending.set(out, out);
  return out;
}

/** The first place in ascending `ids` whose id is not below `id`. */
function lowerBound(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Membership in a ledger's `above` (any order; searched once it is ascending). */
function consumedAbove(above: string[]): { has(id: string): boolean } {
  const sorted = sortedUnique(above);
  return { has: (id) => sorted[lowerBound(sorted, id)] === id };
}

/** Two ascending lists, each once, as one (new ids mostly sort after all the others). */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  if (b.length === 0) return a as string[];
  if (a.length === 0 || a[a.length - 1]! < b[0]!) return [...a, ...b];
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]! < b[j]! ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}
