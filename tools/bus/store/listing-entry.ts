// One entry of a scope's listing (tools/bus/store/listing.ts): what the listing cache knows
// of one id of a scope directory without opening the message, its line in the cache's files,
// and how it is read from the message itself.
//
//   <id> <time> <re> <from> [<to>]
//
// `time` is `=` when it is the id's own (tools/wire/ids.ts idTime), else the file's mtime in
// ms as readMessage gives it; `re` is `.` for none and `?` for a file that could not be read
// when it was listed (read it to know). `from` is written for every scope (a sender's own
// messages are found newest first without opening the others', tools/verbs/delivery.ts
// runSent), `to` for trays only, both with `%` and white space percent-encoded.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { type Scope, addressees, resolveEnvelope } from '../../wire/envelope.js';
import { idTime, isMessageId } from '../../wire/ids.js';
import { audienceOf } from '../../wire/visibility.js';
import { rootOfScopeDir } from './layout.js';
import { SIGNAL_EXT, readParties, readSignalFile } from './messages.js';

/** One id of a scope directory, as the cache knows it. */
export interface Entry {
  id: string;
  /** What readMessage says: the id's own time, else the file's mtime (ms). */
  time: number;
  /** The file could not be read when it was listed: read it to know anything else. */
  unknown?: true;
  re?: string;
  /**
   * The sender's id and (trays only) the `to` field, as readMessage reads them (a message of
   * another machine's localized, tools/bus/trust/origin.ts), so tools/wire/visibility.ts
   * answers for an entry what it answers for its message.
   */
  fromId?: string;
  to?: string;
}

/** A position in time order: (time, id), as tools/bus/store/messages.ts sortMessages orders messages. */
export interface Key {
  time: number;
  id: string;
}

export function compareKeys(a: Key, b: Key): number {
  return a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export interface Counts {
  /** Every entry, unreadable ones included (`attend status` counts files). */
  n: number;
  /** Entries that could not be read. */
  bad: number;
  /** Trays: readable entries addressed to nobody in particular (everyone's). */
  open: number;
  /** Trays: per party (sender or addressee), readable addressed entries it is party to. */
  parties: Record<string, number>;
}

// ---------------------------------------------------------------------------------------
// Lines

function esc(v: string): string {
  if (v === '') return '%';
  return v.replace(/[%\s]/g, (c) => encodeURIComponent(c));
}

function unesc(v: string): string {
  if (v === '%') return '';
  return v.includes('%') ? decodeURIComponent(v) : v;
}

export function formatEntry(e: Entry, tray: boolean): string {
  const t = idTime(e.id) === e.time ? '=' : String(e.time);
  if (e.unknown) return `${e.id} ${t} ?`;
  const re = e.re ?? '.';
  return tray ? `${e.id} ${t} ${re} ${esc(e.fromId ?? '')} ${esc(e.to ?? '')}` : `${e.id} ${t} ${re} ${esc(e.fromId ?? '')}`;
}

export function parseEntry(line: string, tray: boolean): Entry | null {
  const f = line.split(' ');
  const id = f[0] ?? '';
  if (!isMessageId(id) || f[1] === undefined || f[2] === undefined) return null;
  const time = f[1] === '=' ? idTime(id) : Number(f[1]);
  if (time === null || !Number.isFinite(time)) return null;
  if (f[2] === '?') return f.length === 3 ? { id, time, unknown: true } : null;
  const e: Entry = { id, time };
  if (f[2] !== '.') {
    if (!isMessageId(f[2])) return null;
    e.re = f[2];
  }
  if (f.length !== (tray ? 5 : 4)) return null;
  try {
    e.fromId = unesc(f[3]!);
    if (tray) e.to = unesc(f[4]!);
  } catch {
    return null;
  }
  return e;
}

// ---------------------------------------------------------------------------------------
// Entries in time order

/** The first index in `xs` (sorted) whose key is at or after `k`. */
export function lowerIndex(xs: readonly Entry[], k: Key): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareKeys(xs[mid] as Entry, k) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function mergeSorted(a: Entry[], b: Entry[]): Entry[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: Entry[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compareKeys(a[i] as Entry, b[j] as Entry) <= 0 ? (a[i++] as Entry) : (b[j++] as Entry));
  while (i < a.length) out.push(a[i++] as Entry);
  while (j < b.length) out.push(b[j++] as Entry);
  return out;
}

// ---------------------------------------------------------------------------------------
// Reading a message's first line for the cache

/** The time readMessage gives a file: the id's own, else the file's mtime; null when gone. */
export function entryTime(dir: string, id: string): number | null {
  const own = idTime(id);
  if (own !== null) return own;
  try {
    return statSync(join(dir, `${id}${SIGNAL_EXT}`)).mtimeMs;
  } catch {
    return null;
  }
}

/** What the cache records for one file; null when it is gone. Never reports: readers do. */
export function readEntry(dir: string, scope: Scope, id: string): Entry | null {
  const path = join(dir, `${id}${SIGNAL_EXT}`);
  const res = readSignalFile(path);
  if (!res.ok) {
    if (res.gone) return null;
    const time = entryTime(dir, id);
    return time === null ? null : { id, time, unknown: true };
  }
  const env = resolveEnvelope(res.envelope, scope);
  const e: Entry = { id, time: idTime(id) ?? res.mtimeMs };
  if (env.re !== undefined) e.re = env.re;
  // Who may see it is decided on these, so they are read as the message is (issue 19).
  const parties = readParties(rootOfScopeDir(dir), scope, id, path, res.envelope);
  e.fromId = parties.fromId;
  if (scope.kind === 'tray') e.to = parties.to;
  else if (scope.kind === 'open' && addressees(env.to).length > 0) e.to = env.to;
  return e;
}

/** Party ids are text from files: a record without a prototype, so `__proto__` is just an id. */
export function partyRecord(from: Record<string, number>): Record<string, number> {
  return Object.assign(Object.create(null) as Record<string, number>, from);
}

export function tally(c: Counts, e: Entry, tray: boolean, sign: 1 | -1): void {
  c.n += sign;
  if (e.unknown) {
    c.bad += sign;
    return;
  }
  if (!tray) return;
  // Per party who may see it, so countFor(who) is what maySee(who) would count.
  const audience = audienceOf({ kind: 'tray' }, e);
  if (audience === 'everyone') {
    c.open += sign;
    return;
  }
  for (const p of audience) {
    const v = (c.parties[p] ?? 0) + sign;
    if (v === 0) delete c.parties[p];
    else c.parties[p] = v;
  }
}
