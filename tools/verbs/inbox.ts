// `inbox`, `read` and `thread`: the receive set, newest page first; one message in full;
// the thread a message belongs to. Reading never consumes or deletes.

import type { VerbCtx } from './context.js';
import { busError, notFoundError, refusedError, usageError, verbHint } from '../wire/errors.js';
import { type Gate, type HeldCheck, type HeldRun, UNCHECKED, createGate, createHeldCheck, delegationsStamp, lineageStamp, trustDirOf, trustStamp } from '../bus/trust/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SETTLE_MS, scopeDir } from '../bus/store/index.js';
import { scopeName } from '../wire/display.js';
import { type Key, type ScopeListing, compareKeys, entryTime, mergeDescending, withListings } from '../bus/store/index.js';
import { LEDGER_GRACE_MS, receiveScopes } from '../bus/delivery/index.js';
import { type Message, SIGNAL_EXT, type Unreadable, findMessage, listScopes, readMessage, readScopes, unreadableDirs } from '../bus/store/index.js';
import { noteSurfaced } from '../bus/delivery/index.js';
import { idTime, isMessageId } from '../wire/ids.js';
import { printable } from '../wire/names.js';
import { type Addressed, isDirectMail, maySee } from '../wire/visibility.js';
import { attendKey } from '../wire/names.js';

/** A message as JSON (CLI `--json`, MCP results): the one shape every front end prints. */
export function messageJson(m: Message) {
  return {
    id: m.id,
    scope: scopeName(m.scope),
    time: new Date(m.time).toISOString(),
    from: m.from,
    fromKind: m.fromKind,
    fromId: m.fromId,
    // Issue 13: the machine a message came from, when another one (its from_id then reads host:id).
    ...(m.fromHost !== undefined ? { fromHost: m.fromHost } : {}),
    onBehalfOf: m.onBehalfOf ?? null,
    to: m.to,
    re: m.re ?? null,
    // Issue 23 §3: urgent or quiet; null for a normal message.
    urgency: m.urgency ?? null,
    project: m.project,
    cwd: m.cwd,
    body: m.body,
    legacy: m.legacy,
    // Issue 14: the signature check, whether on_behalf_of is vouched for, why it is held.
    sig: m.sig ?? null,
    ...(m.sigReason !== undefined ? { sigReason: m.sigReason } : {}),
    // Issue 20: signed by a key that replaced a lost one, so not provably the sender of before.
    ...(m.newKeySince !== undefined ? { newKeySince: new Date(m.newKeySince).toISOString() } : {}),
    ...(m.onBehalfOf !== undefined ? { onBehalfOfStatus: m.obo ?? 'claimed', ...(m.oboReason !== undefined ? { onBehalfOfReason: m.oboReason } : {}) } : {}),
    ...(m.heldReason !== undefined ? { held: m.heldReason } : {}),
    ...('access' in m ? { access: (m as ReadMessage).access } : {}),
  };
}

/**
 * How the caller may read a message (issue #10 §11): it received it (its trays, channels it
 * is in, #open), it sent it, or — the human who owns the bus — it reads what was not for it,
 * and the output says so. An agent never reads another session's direct message by id.
 */
type Access = 'received' | 'sent' | 'owner';

interface ReadMessage extends Message {
  access: Access;
}

/**
 * Find a message the caller may read: in its receive set (and for it there: a sibling's
 * tray mail is not), else anywhere on the bus if the caller sent it, or is the human owner.
 */
export function lookupMessage(ctx: VerbCtx, id: string): ReadMessage | null {
  const root = ctx.root();
  const who = ctx.identity();
  const mine = findMessage(root, receiveScopes(root, who), id, ctx.reporter);
  if (mine && maySee(mine.scope, mine, who.id)) return { ...mine, access: mine.fromId === who.id ? 'sent' : 'received' };
  const anywhere = findMessage(root, listScopes(root), id, ctx.reporter);
  if (!anywhere) return null;
  if (anywhere.fromId === who.id) return { ...anywhere, access: 'sent' };
  if (who.kind === 'human') return { ...anywhere, access: 'owner' };
  return null;
}

interface InboxInput {
  limit: number;
  page: number;
  before?: string | undefined;
  /** List only what the gate holds back (bad signature, refused by policy), with the reason. */
  held?: boolean | undefined;
}

interface InboxPage {
  messages: Message[];
  total: number;
  page: number;
  pages: number;
  limit: number;
  /**
   * Messages this listing reached but did not verify: past the cap of verifications one pass
   * makes (tools/bus/trust/held.ts), never shown; a later listing verifies them.
   */
  unchecked?: number;
  /** Scope directories that could not be read: the listing is incomplete (issue #10 item 6). */
  unreadable?: Unreadable[];
}

/** Held messages are never shown to a model (spec §7): only the person who owns the bus lists them. */
function heldForThePersonOnly(who: { kind: string }): void {
  if (who.kind !== 'human') throw refusedError('held messages are shown only to the person who owns the bus, never to a session', 'run attend inbox --held in your own terminal');
}

/**
 * Every message of the receive set the caller may see, oldest first: a full read. Only
 * `--held` (the owner's look at every directory) and what must see everything use it; the
 * listings below read only what they show.
 */
export function readInbox(ctx: VerbCtx, opts: { held?: boolean | undefined } = {}): Message[] {
  const root = ctx.root();
  const who = ctx.identity();
  // They list every directory, since what is held sits in sessions' trays.
  if (opts.held) heldForThePersonOnly(who);
  const gate = openGate(ctx);
  const seen = new Set<string>();
  const out: Message[] = [];
  for (const m of readScopes(root, opts.held ? listScopes(root) : receiveScopes(root, who), ctx.reporter)) {
    // A fan-out writes the same id into several directories; show it once.
    if (seen.has(m.id) || (!opts.held && !maySee(m.scope, m, who.id))) continue;
    const reason = gate.held(m);
    if ((reason !== null) !== (opts.held === true)) continue;
    if (reason !== null) m.heldReason = reason;
    seen.add(m.id);
    out.push(m);
  }
  return out;
}

/**
 * The owner's held messages kept current by what is new, for a front end that asks again at
 * every arrival (the web's owner tab): the first look reads every directory, as
 * `readInbox({ held: true })` does; each later one reads, per directory, only the listing's
 * entries above the newest it saw, so a look costs what arrived since, not the history. The
 * trust inputs and the policy decide what is held: when their stamp moves, it starts again
 * from nothing. A held message deleted since (cleanup) is dropped when it would be shown.
 */
export function createHeldWatch(): { list(ctx: VerbCtx, limit: number): Message[] } {
  let stamp: string | null = null;
  // Per directory: the newest entry time seen, and the ids looked at within GRACE of it (a
  // file reaches its listing a moment after a newer one when its index line is on its way),
  // so a later look goes GRACE below the newest and reads only the ids it has not. What lies
  // below that floor is counted (the listing counts a range without parsing it): a file that
  // arrived there since (a writer whose clock is behind) makes the next look read the whole
  // directory again, so nothing held is missed.
  const seen = new Map<string, { top: number; ids: Map<string, number>; floor: Key; below: number; base: string | null; baseBelow: number }>();
  const held = new Map<string, Message>();
  const FIRST: Key = { time: -Infinity, id: '' };
  return {
    list(ctx, limit) {
      const root = ctx.root();
      heldForThePersonOnly(ctx.identity());
      const gate = openGate(ctx);
      // What decides what is held: the trust inputs and policy, the lineage, the delegations.
      const now = [trustStamp(root, trustDirOf(ctx.paths.keysDir)), lineageStamp(root), delegationsStamp(root)].join('|');
      if (now !== stamp) {
        stamp = now;
        seen.clear();
        held.clear();
      }
      withListings(root, listScopes(root), { now: ctx.now(), reporter: ctx.reporter }, (ls) => {
        for (const l of ls) {
          let was = seen.get(l.dirName);
          if (was) {
            const c = l.countBetween(FIRST, was.floor, was.base !== null && was.base === l.base ? was.baseBelow : undefined);
            if (c.base + c.tail > was.below) was = undefined; // a late arrival below the floor
          }
          const floor = was ? was.top - LEDGER_GRACE_MS : -Infinity;
          const ids = was?.ids ?? new Map<string, number>();
          const cur = l.descending();
          let top = was?.top ?? -Infinity;
          for (let e = cur.next(); e !== null && e.time >= floor; e = cur.next()) {
            top = Math.max(top, e.time);
            if (ids.has(e.id)) continue;
            ids.set(e.id, e.time);
            if (held.has(e.id)) continue; // a fan-out's other copy
            const m = readMessage(root, l.scope, e.id, ctx.reporter);
            const reason = m ? gate.held(m) : null;
            if (m && reason !== null) held.set(m.id, Object.assign(m, { heldReason: reason }));
          }
          const next: Key = { time: top - LEDGER_GRACE_MS, id: '' };
          for (const [id, t] of ids) if (t < next.time) ids.delete(id);
          const c = l.countBetween(FIRST, next);
          seen.set(l.dirName, { top, ids, floor: next, below: c.base + c.tail, base: l.base, baseBelow: c.base });
        }
      });
      const out: Message[] = [];
      for (const m of [...held.values()].sort((a, b) => (a.time !== b.time ? b.time - a.time : a.id < b.id ? 1 : -1))) {
        if (out.length >= limit) break;
        if (!existsSync(join(scopeDir(root, m.scope), `${m.id}${SIGNAL_EXT}`))) {
          held.delete(m.id);
          continue;
        }
        out.push(m);
      }
      return out;
    },
  };
}

function openGate(ctx: VerbCtx): Gate {
  const gate = createGate(ctx.root(), ctx.identity());
  const broken = gate.broken();
  if (broken !== null) throw busError(broken, 'fix or remove the policy file; attend grants shows what it holds');
  return gate;
}

/**
 * The directories an inbox lists, and what in each is the reader's (issue 21 item 2). A
 * session's is its receive set (its tray, #open, its channels), by maySee. A person is one
 * party in every project: mail for them waits in the tray of wherever they were last seen (a
 * chat's directory, the directory they last sent from, their home), so a person's inbox also
 * takes each other tray that holds mail naming them or sent by them — the tray's listing
 * counts say so without a message read — and of such a tray only that mail (isDirectMail:
 * the rest is its sessions'). `attend inbox` finds the person's mail from any directory.
 */
export interface InboxListings {
  /** In receive order, then the other trays that hold the person's mail. */
  listings: ScopeListing[];
  /** Whether a message (or a listing entry) of `l` is the reader's. */
  sees(l: ScopeListing, m: Addressed): boolean;
  /** How many messages of `l` are the reader's, older than `below` when given. */
  count(l: ScopeListing, below?: Key): number;
}

export function withInboxListings<T>(ctx: VerbCtx, fn: (inbox: InboxListings) => T): T {
  const root = ctx.root();
  const who = ctx.identity();
  const own = receiveScopes(root, who);
  const ownTray = attendKey(who.origin);
  const away = who.kind === 'human' ? listScopes(root).filter((s) => s.kind === 'tray' && s.key !== ownTray) : [];
  return withListings(root, [...own, ...away], { now: ctx.now(), reporter: ctx.reporter }, (all) => {
    const elsewhere = new Set(all.slice(own.length).filter((l) => l.countNamed(who.id) > 0));
    const sees = (l: ScopeListing, m: Addressed) => (elsewhere.has(l) ? isDirectMail(m, who.id) : maySee(l.scope, m, who.id));
    return fn({
      listings: [...all.slice(0, own.length), ...elsewhere],
      sees,
      count: (l, below) => {
        const n = elsewhere.has(l) ? l.countNamed(who.id) : l.countFor(who.id);
        return below ? n - l.countFrom(below, who.id, (e) => sees(l, e)) : n;
      },
    });
  });
}

/**
 * How many messages of the inbox are the caller's (older than `below` when given), from the
 * listings' counts, without reading them. A message the gate holds back is counted: telling
 * needs reading it, and it is not shown.
 */
export function countInbox(ctx: VerbCtx, inbox: InboxListings, below?: Key): number {
  const root = ctx.root();
  const ls = inbox.listings;
  let total = 0;
  for (const l of ls) total += inbox.count(l, below);
  // One message in two receive directories counts once. attend writes such copies only as
  // mail addressed to someone (a notice to an agent's tray and, for a human, to #open), and
  // outside trays the listings name those. (A fan-out to a person and a party of another
  // project writes one copy in each of their trays: a person's total counts it in both.)
  const copies = new Set<string>();
  for (const l of ls) for (const x of l.xids) copies.add(x);
  for (const id of copies) {
    let n = 0;
    for (const l of ls) {
      const e = l.lookup(id, (x) => entryTime(scopeDir(root, l.scope), x));
      if (e && !e.unknown && inbox.sees(l, e) && (!below || compareKeys(e, below) < 0)) n++;
    }
    if (n > 1) total -= n - 1;
  }
  return total;
}

/**
 * A held run is recorded only this long: a run of one is a single verdict already, and a
 * short run saves a listing nothing.
 */
const MIN_RUN = 2;
/**
 * What a run's `at` trails the walk's start by: a file that reached the directory shortly
 * before the walk may not be in its listing yet (an index line on its way, at most
 * SETTLE_MS, dir-index.ts), so a run never covers one as if the walk had seen it held.
 */
export const RUN_SLACK_MS = 2 * SETTLE_MS + 50;

/**
 * The inbox newest first, as the caller may see it: each message once, mail that is not the
 * caller's skipped from the listing, held messages skipped as they are read. Reads a message
 * only when it is reached. A stretch of a listing found held by signature is recorded as a
 * held run (tools/bus/store/verdicts.ts), and a later walk steps over a run whose count the
 * listing still has, without parsing its entries (issue 20, must-have 5).
 */
function* walkInbox(ctx: VerbCtx, inbox: InboxListings, gate: HeldCheck, below?: Key, onHeld?: (m: Message, reason: string) => void, pick?: (k: Key) => Pick): Generator<Message> {
  const root = ctx.root();
  const merged = mergeDescending(inbox.listings, below);
  const seen = new Set<string>();
  const at = ctx.now() - RUN_SLACK_MS;
  // Per listing, the held stretch the walk is in, newest entry first.
  const open = new Map<ScopeListing, HeldRun>();
  // Runs this walk found out of date, still good for the files they covered.
  const stale: HeldRun[] = [];
  const end = (l: ScopeListing) => {
    const r = open.get(l);
    open.delete(l);
    if (r && r.n >= MIN_RUN) gate.addRun(l.scope, r);
  };
  const held = (l: ScopeListing, k: Key, reason: string, run?: HeldRun) => {
    const r = open.get(l);
    const first = run ? run.first : { time: k.time, id: k.id };
    const n = run ? run.n : 1;
    if (r) {
      r.first = first;
      r.n += n;
      if (run) r.at = Math.min(r.at, run.at);
    } else open.set(l, { first, last: { time: k.time, id: k.id }, n, at: run ? Math.min(at, run.at) : at, reason });
  };
  try {
    // Copies of one message come in receive order, and the first the caller may see is the
    // one shown, as in a full read.
    for (let p = merged.next(); p !== null; p = merged.next()) {
      const { listing, entry } = p;
      const picked = pick?.(entry);
      if (picked === 'stop') break;
      if (picked === 'skip') {
        end(listing);
        continue;
      }
      // Runs are of ids that carry their own time (keyOf in tools/bus/store/verdicts.ts).
      const own = idTime(entry.id) === entry.time;
      const run = own ? gate.runAt(listing.scope, entry) : undefined;
      if (run && compareKeys(run.last, entry) === 0) {
        // A kept run ends at this entry: stepped over while the listing holds what it held.
        const base = listing.base;
        const c = listing.countBetween(run.first, run.last, base !== null && run.base?.[0] === base ? run.base[1] : undefined);
        if (c.base + c.tail === run.n) {
          if (base !== null) gate.countedIn(listing.scope, run, base, c.base);
          held(listing, entry, run.reason, run);
          merged.skipBelow(listing, run.first);
          continue;
        }
        // Something came into its range since (or went): the walk goes through it, and
        // records what it finds as runs again. What the run held still counts as held
        // (a file changed since it was found is not covered: held.ts admit).
        gate.dropRun(listing.scope, run);
        stale.push(run);
      }
      if (seen.has(entry.id) || !inbox.sees(listing, entry)) {
        end(listing);
        continue;
      }
      // A held verdict kept from an earlier look skips the file unread; past the pass's cap of
      // verifications the rest is unchecked, counted and never shown (tools/bus/trust/held.ts).
      const kept = gate.admit(listing.scope, entry.id, { covered: stale });
      if (kept === UNCHECKED) {
        end(listing);
        continue;
      }
      if (kept !== null) {
        if (own) held(listing, entry, kept);
        else end(listing);
        continue;
      }
      const m = readMessage(root, listing.scope, entry.id, ctx.reporter);
      const reason = m && inbox.sees(listing, m) ? gate.held(m) : null;
      if (m && reason !== null && inbox.sees(listing, m)) onHeld?.(m, reason);
      if (!m || !inbox.sees(listing, m) || reason !== null) {
        // Only a signature's verdict is the file's own, the same for every reader.
        if (m && reason !== null && m.sig === 'bad' && own) held(listing, entry, reason);
        else end(listing);
        continue;
      }
      end(listing);
      seen.add(m.id);
      yield m;
    }
  } finally {
    for (const l of [...open.keys()]) end(l);
  }
}

/** What a walk does with a listing entry before it reads its message: read it, pass it by unread, or end there. */
export type Pick = 'read' | 'skip' | 'stop';

/**
 * The inbox newest first, as runInbox walks it, without marking anything shown: a conduit's
 * look (tools/adapters) that must not move what `attend reply` answers. `visit` returns false
 * to stop the walk (nothing older is read). `onHeld` hears each message the walk reads and
 * the gate holds back, with the reason (a verdict kept from an earlier walk skips the file
 * unread, and is not heard). `pick`, given, is asked of each entry (its id and time) before
 * its message is read: a conduit that knows an id already passes it by without opening it,
 * and ends the walk at a time it need not go below.
 */
export function scanInbox(ctx: VerbCtx, visit: (m: Message) => boolean, onHeld?: (m: Message, reason: string) => void, pick?: (k: Key) => Pick): void {
  const gate = openGate(ctx);
  const check = createHeldCheck(ctx.root(), gate);
  withInboxListings(ctx, (ls) => {
    for (const m of walkInbox(ctx, ls, check, undefined, onHeld, pick)) if (!visit(m)) break;
  });
  check.save();
}

export function runInbox(ctx: VerbCtx, input: InboxInput): InboxPage {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > 10_000) throw usageError('--limit takes a whole number from 1 to 10000');
  if (!Number.isInteger(input.page) || input.page < 1) throw usageError('--page takes a whole number from 1');
  if (input.before !== undefined && !isMessageId(input.before)) throw usageError(`--before '${printable(input.before)}' is not a message id`);
  if (input.held) return heldPage(ctx, input);
  const gate = openGate(ctx);
  const check = createHeldCheck(ctx.root(), gate);
  const { messages, total } = withInboxListings(ctx, (ls) => {
    const below = input.before === undefined ? undefined : keyOf(ctx, ls, gate, input.before);
    const skip = (input.page - 1) * input.limit;
    const page: Message[] = [];
    let n = 0;
    for (const m of walkInbox(ctx, ls, check, below)) {
      if (n++ < skip) continue;
      page.push(m);
      if (page.length === input.limit) break;
    }
    return { messages: page, total: countInbox(ctx, ls, below) };
  });
  check.save();
  markShown(ctx, messages);
  const unreadable = unreadableDirs(ctx.reporter);
  const pages = Math.max(1, Math.ceil(total / input.limit));
  return {
    messages,
    total,
    page: input.page,
    pages,
    limit: input.limit,
    ...(check.unchecked > 0 ? { unchecked: check.unchecked } : {}),
    ...(unreadable.length > 0 ? { unreadable } : {}),
  };
}

/** Where `--before <id>` starts: the message must be one the inbox shows. */
function keyOf(ctx: VerbCtx, inbox: InboxListings, gate: Gate, id: string): Key {
  const root = ctx.root();
  for (const l of inbox.listings) {
    const e = l.lookup(id, (x) => entryTime(scopeDir(root, l.scope), x));
    if (!e || !inbox.sees(l, e)) continue;
    const m = readMessage(root, l.scope, id, ctx.reporter);
    if (m && inbox.sees(l, m) && gate.held(m) === null) return { time: m.time, id };
  }
  throw notFoundError(`message ${id} is not in this inbox`);
}

/** `--held`: the owner's look at what the gate holds back, in every directory (a full read). */
function heldPage(ctx: VerbCtx, input: InboxInput): InboxPage {
  let all = readInbox(ctx, { held: true });
  if (input.before !== undefined) {
    const idx = all.findIndex((m) => m.id === input.before);
    if (idx < 0) throw notFoundError(`message ${input.before} is not in this inbox`);
    all = all.slice(0, idx);
  }
  const newestFirst = all.reverse();
  const pages = Math.max(1, Math.ceil(newestFirst.length / input.limit));
  const messages = newestFirst.slice((input.page - 1) * input.limit, input.page * input.limit);
  markShown(ctx, messages);
  const unreadable = unreadableDirs(ctx.reporter);
  return { messages, total: newestFirst.length, page: input.page, pages, limit: input.limit, ...(unreadable.length > 0 ? { unreadable } : {}) };
}

/** Remember the newest message from someone else that was shown, for `attend reply`. */
function markShown(ctx: VerbCtx, messages: Message[]): void {
  const who = ctx.identity();
  let newest: Message | undefined;
  for (const m of messages) if (m.fromId !== who.id && (!newest || m.time > newest.time)) newest = m;
  if (newest) noteSurfaced(ctx.root(), who.id, { id: newest.id, time: newest.time });
}

export function runRead(ctx: VerbCtx, id: string): ReadMessage {
  if (!isMessageId(id)) throw usageError(`'${printable(id)}' is not a message id`);
  const m = lookupMessage(ctx, id);
  // Not found and not yours read the same, so an id tells nothing about others' mail.
  if (!m) throw notFoundError(`message ${id} was not found among the messages you receive`, verbHint('inbox', [], { then: 'lists message ids' }));
  const reason = createGate(ctx.root(), ctx.identity()).held(m);
  if (reason !== null) throw refusedError(`message ${id} is held: ${reason}`, 'attend inbox --held lists held messages with the reason');
  markShown(ctx, [m]);
  return m;
}

/**
 * The whole thread a message belongs to: its root and every reply below it, oldest first.
 * Up the `re` chain one message at a time; down through the listings' replies, reading only
 * the thread's own messages.
 */
export function runThread(ctx: VerbCtx, id: string): ReadMessage[] {
  const start = runRead(ctx, id);
  const root = ctx.root();
  const who = ctx.identity();
  const byId = new Map<string, ReadMessage>([[start.id, start]]);
  let rootMsg = start;
  const guard = new Set<string>([start.id]);
  while (rootMsg.re !== undefined) {
    const parent = byId.get(rootMsg.re) ?? lookupMessage(ctx, rootMsg.re);
    if (!parent || guard.has(parent.id)) break;
    guard.add(parent.id);
    byId.set(parent.id, parent);
    rootMsg = parent;
  }
  const gate = openGate(ctx);
  withInboxListings(ctx, ({ listings: ls, sees }) => {
    const queue = [rootMsg.id];
    const reached = new Set<string>(queue);
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      // Per reply, the directories that hold it, in receive order: the first copy the caller
      // may see is the one taken, as a full read would.
      const found = new Map<string, ScopeListing[]>();
      for (const l of ls) for (const c of l.children(p)) if (!reached.has(c)) found.set(c, [...(found.get(c) ?? []), l]);
      for (const [c, where] of found) {
        // The start and its ancestors are in the thread whoever they were for.
        if (byId.has(c)) {
          reached.add(c);
          queue.push(c);
          continue;
        }
        for (const l of where) {
          const m = readMessage(root, l.scope, c, ctx.reporter);
          if (!m || !sees(l, m) || gate.held(m) !== null) continue;
          byId.set(c, { ...m, access: m.fromId === who.id ? 'sent' : 'received' });
          reached.add(c);
          queue.push(c);
          break;
        }
      }
    }
  });
  const inThread = new Set<string>([rootMsg.id]);
  const sorted = [...byId.values()].sort((a, b) => a.time - b.time || a.id.localeCompare(b.id));
  // Replies come after their parents in time, so one pass in time order finds them all.
  for (const m of sorted) if (m.re !== undefined && inThread.has(m.re)) inThread.add(m.id);
  return sorted.filter((m) => inThread.has(m.id));
}
