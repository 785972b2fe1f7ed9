// The listing cache (tools/bus/store/listing-cache.ts, listing.ts) against a full read, as a
// model: a world of bus operations (indexed writes, files written by hand with own and foreign
// ids, deletions, unreadable files, a damaged index: truncated, replaced, garbage; a damaged or
// deleted cache) and `check`, which holds every listing to what reading the whole receive set
// answers. The property runs in the slow tier (test/slow/listing.test.ts); the cases by hand
// in test/bus/listing.test.ts.

import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';
import { INDEX_NAME, RECONCILE_MS } from '../../tools/bus/store/dir-index.js';
import { scopeDir, scopeDirName } from '../../tools/bus/store/layout.js';
import { scopeName } from '../../tools/wire/display.js';
import { listingCacheDir, withListings } from '../../tools/bus/store/listing-cache.js';
import { formatEntry, parseEntry } from '../../tools/bus/store/listing-entry.js';
import { receiveScopes } from '../../tools/bus/delivery/receive.js';
import { type Message, createReporter, listIds, readMessage } from '../../tools/bus/store/messages.js';
import { createVerbCtx, type VerbCtx } from '../../tools/verbs/context.js';
import { lookupMessage, readInbox, runInbox, runThread } from '../../tools/verbs/inbox.js';
import { runStatus } from '../../tools/verbs/status.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { createIdFactory } from '../../tools/wire/ids.js';
import { join as joinChannel, put } from './fixtures.js';
import { ME, makeTempBus, type TempBus, useFamilyPolicy } from './temp-bus.js';

export interface World {
  bus: TempBus;
  ctx: () => VerbCtx;
  clock: { now: number };
  scopes: Scope[];
  /** Every id written, for picking `re` and deletions. */
  ids: string[];
  newId: () => string;
  hand: number;
  /** Unreadable files written, newest last. */
  bad: string[];
  warnings: string[];
}

export function makeWorld(): World {
  const bus = makeTempBus();
  const cwd = join(bus.dir, 'work', 'app');
  mkdirSync(cwd, { recursive: true });
  useFamilyPolicy(bus);
  joinChannel(bus.root, 'ops', ME);
  // The channel store marks the reader as an agent member; what counts here is membership.
  const clock = { now: Date.now() };
  const warnings: string[] = [];
  const ctx = () => createVerbCtx({ env: bus.env, cwd, pid: process.pid, now: () => clock.now, identity: 'human', warn: (l) => warnings.push(l) });
  const scopes = receiveScopes(bus.root, ctx().identity());
  // Ids made at a clock the test moves, sometimes backwards (a relay import of an old message).
  const idClock = { t: Date.now() - 3_600_000 };
  const make = createIdFactory({ now: () => idClock.t, pid: 77, random: Math.random });
  const newId = () => {
    idClock.t += 1 + Math.floor(Math.random() * 3);
    if (Math.random() < 0.1) {
      const back = idClock.t;
      idClock.t -= 500;
      const id = make();
      idClock.t = back;
      return id;
    }
    return make();
  };
  return { bus, ctx, clock, scopes, ids: [], newId, hand: 0, bad: [], warnings };
}

const TO = ['me', 'sib', 'both', 'none', 'from-me'] as const;

export type Op =
  | { k: 'send'; scope: number; to: (typeof TO)[number]; re: number | null }
  | { k: 'fanout' }
  | { k: 'hand'; scope: number; foreign: boolean; re: number | null }
  | { k: 'bad'; scope: number; settled: boolean }
  | { k: 'mend' }
  | { k: 'delete'; pick: number }
  | { k: 'index'; scope: number; how: 'truncate' | 'half' | 'replace' | 'garbage' }
  | { k: 'cache'; scope: number; how: 'delete' | 'garbage' | 'base-cut' | 'base-garbage' | 'base-gone' }
  | { k: 'tick' };

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ k: fc.constant('send' as const), scope: fc.nat(2), to: fc.constantFrom(...TO), re: fc.option(fc.nat(), { nil: null }) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'fanout' as const }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('hand' as const), scope: fc.nat(2), foreign: fc.boolean(), re: fc.option(fc.nat(), { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('bad' as const), scope: fc.nat(2), settled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ k: 'mend' as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('index' as const), scope: fc.nat(2), how: fc.constantFrom('truncate' as const, 'half' as const, 'replace' as const, 'garbage' as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cache' as const), scope: fc.nat(2), how: fc.constantFrom('delete' as const, 'garbage' as const, 'base-cut' as const, 'base-garbage' as const, 'base-gone' as const) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'tick' as const }) },
);

/**
 * The other writer: a session, since a person other than the bus's own is a stranger, held
 * (tools/wire/permit.ts); the model is about listings, not about who may write.
 */
const OTHER = 'sid-h';
const withKind = (f: { to: string; fromId: string }) => ({ ...f, fromKind: f.fromId === ME ? ('human' as const) : ('agent' as const) });

function toField(to: (typeof TO)[number], scope: Scope): { to: string; fromId: string } {
  if (scope.kind === 'open' && (to === 'none' || to === 'from-me')) return { to: '*', fromId: to === 'from-me' ? ME : OTHER };
  if (scope.kind === 'channel' && to === 'none') return { to: '#ops', fromId: OTHER };
  switch (to) {
    case 'me':
      return { to: ME, fromId: OTHER };
    case 'sib':
      return { to: 'sib-1', fromId: OTHER };
    case 'both':
      return { to: `sib-1,${ME}`, fromId: OTHER };
    case 'from-me':
      return { to: 'sib-1', fromId: ME };
    default:
      return { to: 'sib-2', fromId: 'sib-1' };
  }
}

export function apply(w: World, op: Op): void {
  const root = w.bus.root;
  const scopeAt = (i: number) => w.scopes[i % w.scopes.length] as Scope;
  const pickRe = (re: number | null) => (re === null || w.ids.length === 0 ? undefined : w.ids[re % w.ids.length]);
  switch (op.k) {
    case 'send': {
      const scope = scopeAt(op.scope);
      const re = pickRe(op.re);
      w.ids.push(put(root, w.newId, { scope, ...withKind(toField(op.to, scope)), body: `m${w.ids.length}`, ...(re !== undefined ? { re } : {}) }));
      return;
    }
    case 'fanout': {
      // A notice to an agent's tray and, for a human, #open: one id in two receive directories.
      const id = w.newId();
      const to = `agent-x,${ME}`;
      const where: Scope[] = [{ kind: 'tray', key: (w.scopes[0] as { key: string }).key }, { kind: 'open' }];
      for (const scope of where) put(root, w.newId, { scope, id, to, fromId: OTHER, fromKind: 'agent', body: 'notice' });
      w.ids.push(id);
      return;
    }
    case 'hand': {
      // Written the way another tool writes the layout: no index line.
      const scope = scopeAt(op.scope);
      const dir = scopeDir(root, scope);
      mkdirSync(dir, { recursive: true });
      const id = op.foreign ? `hand_${++w.hand}` : w.newId();
      const re = pickRe(op.re);
      const { to } = toField('me', scope);
      writeFileSync(join(dir, `${id}.signal`), `claude:${OTHER}|p|/p|from_kind:agent|from_id:${OTHER}|to:${to}|${re !== undefined ? `re:${re}|` : ''}by hand\n`, { mode: 0o600 });
      if (op.foreign) {
        const t = (Date.now() - 1_800_000 + w.hand * 7_777) / 1000;
        utimesSync(join(dir, `${id}.signal`), t, t);
      }
      w.ids.push(id);
      return;
    }
    case 'bad': {
      const scope = scopeAt(op.scope);
      const dir = scopeDir(root, scope);
      mkdirSync(dir, { recursive: true });
      const id = w.newId();
      const path = join(dir, `${id}.signal`);
      writeFileSync(path, Buffer.from([0, 1, 2, 3]), { mode: 0o600 });
      w.bad.push(path);
      // Settled files are moved to the quarantine by the first reader that meets them.
      if (op.settled) utimesSync(path, Date.now() / 1000 - 60, Date.now() / 1000 - 60);
      return;
    }
    case 'mend': {
      // An unreadable file rewritten in place (the directory does not change): readable now.
      const path = w.bad.pop();
      if (path === undefined) return;
      try {
        writeFileSync(path, `claude:${OTHER}|p|/p|from_kind:agent|from_id:${OTHER}|to:${ME}|mended\n`, { flag: 'r+' });
      } catch {
        // quarantined meanwhile
      }
      return;
    }
    case 'delete': {
      const files = w.scopes.flatMap((s) => listIds(scopeDir(root, s)).map((id) => join(scopeDir(root, s), `${id}.signal`)));
      if (files.length > 0) unlinkSync(files[op.pick % files.length] as string);
      return;
    }
    case 'index': {
      const file = join(scopeDir(root, scopeAt(op.scope)), INDEX_NAME);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return;
      }
      if (op.how === 'truncate') truncateSync(file, 0);
      else if (op.how === 'half') truncateSync(file, Math.floor(text.length / 2));
      else if (op.how === 'garbage') appendFileSync(file, 'not an index line\n');
      else {
        writeFileSync(`${file}.new`, text);
        renameSync(`${file}.new`, file);
      }
      return;
    }
    case 'cache': {
      const cdir = listingCacheDir(root, scopeDirName(scopeAt(op.scope)));
      let names: string[];
      try {
        names = readdirSync(cdir);
      } catch {
        return;
      }
      const base = names.find((n) => n.endsWith('.ids'));
      if (op.how === 'delete') unlinkSync(join(cdir, 'state.json'));
      else if (op.how === 'garbage') writeFileSync(join(cdir, 'state.json'), '{"v":1,"n":');
      else if (base && op.how === 'base-cut') truncateSync(join(cdir, base), Math.floor(statSync(join(cdir, base)).size / 2));
      else if (base && op.how === 'base-gone') unlinkSync(join(cdir, base));
      else if (base) writeFileSync(join(cdir, base), Buffer.alloc(statSync(join(cdir, base)).size, '~ \n'));
      return;
    }
    case 'tick':
      w.clock.now += RECONCILE_MS;
      return;
  }
}

/** What the inbox showed before the listing cache: every message read, then paged. */
export function fullPage(ctx: VerbCtx, limit: number, page: number, before?: string): { ids: string[]; total: number; pages: number } | 'not found' {
  let all = readInbox(ctx);
  if (before !== undefined) {
    const idx = all.findIndex((m) => m.id === before);
    if (idx < 0) return 'not found';
    all = all.slice(0, idx);
  }
  const newest = all.reverse();
  return { ids: newest.slice((page - 1) * limit, page * limit).map(label), total: newest.length, pages: Math.max(1, Math.ceil(newest.length / limit)) };
}

/** The thread as the full read found it. */
export function fullThread(ctx: VerbCtx, id: string): string[] {
  const byId = new Map<string, Message>();
  for (const m of readInbox(ctx)) byId.set(m.id, m);
  let rootMsg = lookupMessage(ctx, id) as Message;
  byId.set(rootMsg.id, rootMsg);
  const guard = new Set([rootMsg.id]);
  while (rootMsg.re !== undefined) {
    const parent = byId.get(rootMsg.re) ?? lookupMessage(ctx, rootMsg.re);
    if (!parent || guard.has(parent.id)) break;
    guard.add(parent.id);
    byId.set(parent.id, parent);
    rootMsg = parent;
  }
  const inThread = new Set([rootMsg.id]);
  const sorted = [...byId.values()].sort((a, b) => a.time - b.time || a.id.localeCompare(b.id));
  for (const m of sorted) if (m.re !== undefined && inThread.has(m.re)) inThread.add(m.id);
  return sorted.filter((m) => inThread.has(m.id)).map((m) => m.id);
}

export const label = (m: Message) => `${scopeName(m.scope)}:${m.id}`;

export function runInboxIds(w: World, limit: number, page: number): { ids: string[]; total: number; pages: number } {
  const got = runInbox(w.ctx(), { limit, page });
  return { ids: got.messages.map(label), total: got.total, pages: got.pages };
}

export function check(w: World, seed: number): void {
  const root = w.bus.root;
  // Each scope: the cache holds exactly the directory's files, with what reading them says.
  withListings(root, w.scopes, { now: w.clock.now, reporter: createReporter(() => {}) }, (ls) => {
    for (const l of ls) {
      const scope = l.scope;
      const all = l.all();
      expect(all.map((e) => e.id).sort(), `ids of ${scopeDirName(scope)}`).toEqual(listIds(scopeDir(root, scope)));
      expect(l.size).toBe(all.length);
      for (const e of all) {
        if (e.unknown) continue;
        const m = readMessage(root, scope, e.id, createReporter(() => {}));
        if (!m) continue;
        expect(e.time).toBe(m.time);
        expect(e.re).toBe(m.re);
        if (scope.kind === 'tray') expect([e.fromId, e.to]).toEqual([m.fromId, m.to]);
        expect(parseEntry(formatEntry(e, scope.kind === 'tray'), scope.kind === 'tray')).toEqual(e);
      }
    }
  });
  const ctx = w.ctx();
  const limit = 1 + (seed % 4);
  const ref = fullPage(ctx, limit, 1) as { ids: string[]; total: number; pages: number };
  for (let page = 1; page <= ref.pages + 1; page++) {
    const got = runInbox(w.ctx(), { limit, page });
    expect({ ids: got.messages.map(label), total: got.total, pages: got.pages }, `page ${page} of ${limit}`).toEqual(fullPage(ctx, limit, page));
  }
  const shown = readInbox(ctx).map((m) => m.id);
  const before = shown[seed % Math.max(1, shown.length)];
  if (before !== undefined) {
    const got = runInbox(w.ctx(), { limit, page: 1, before });
    expect({ ids: got.messages.map(label), total: got.total, pages: got.pages }, `--before ${before}`).toEqual(fullPage(ctx, limit, 1, before));
    expect(runThread(w.ctx(), before).map((m) => m.id), `thread of ${before}`).toEqual(fullThread(ctx, before));
  }
  expect(runStatus(w.ctx()).inbox.total).toBe(readInbox(ctx).length);
}
