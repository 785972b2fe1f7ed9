// Outbound: which local messages go to the hub, found cheaply. No NATS here.
//
// Per directory under signals/ the relay follows the index hint through the store's one
// follower (followTail, tools/bus/store/follower.ts) for the ids appended since its last look,
// which falls back to a full listing when the hint does not explain the directory. A full listing is cut at a floor: the creation time of the
// newest message already published there (relay/cursor.json) minus a slack for writers whose
// id was minted a little before their rename. What the slack republishes after a restart is
// absorbed by the hub's duplicate window (Nats-Msg-Id) and the receivers' idempotent write.
//
// Imported messages are never published (the loop guard: tools/relay/store.ts ImportedSet).

import { lstatSync, openSync, closeSync, fstatSync, readdirSync, constants as fsc } from 'node:fs';
import { join } from 'node:path';
import { type TailState, followTail, newTailState } from '../bus/store/index.js';
import { scopeOfDirName, signalsDir } from '../bus/store/index.js';
import { MAX_FILE_BYTES, SIGNAL_EXT } from '../bus/store/index.js';
import { addressees, parseSignal } from '../wire/envelope.js';
import { idTime } from '../wire/ids.js';
import type { Cursor, ImportedSet } from './store.js';
import { type Route, dedupId, subjectFor } from './subjects.js';
import { readAll } from '../bus/store/index.js';
import { SIG_EXT } from '../bus/trust/index.js';

/** How long the index may leave the directory's changes unexplained before a full listing. */
const UNEXPLAINED_MS = 1_000;
/** How often an unexplained chain is checked again meanwhile. */
const CHECK_MS = 100;

/** How far behind the newest published id a full listing still looks. */
const SLACK_MS = 2 * 60_000;

export interface Pending {
  dir: string;
  id: string;
  subject: string;
  /** Nats-Msg-Id: the hub drops a second publish of the same message to the same place. */
  msgId: string;
  data: Uint8Array;
  timeMs: number;
  /** The signature sidecar's exact bytes (`<id>.sig`), when the message is signed. */
  sig?: Uint8Array;
  /** Whose key signed it (from_id and the sidecar's key id): published before the message. */
  signer?: { node: string; keyId: string };
}

interface DirState {
  /** Where the follower is in the directory (tools/bus/store/follower.ts followTail). */
  follow: TailState;
  /** Ids to look at again on the next scan (a publish failed), whatever the index says. */
  again: Set<string>;
  /** Ids handled (published, local only, or unreadable) at or above the floor. */
  done: Set<string>;
}

function readBytes(path: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size === 0 || st.size > MAX_FILE_BYTES) return null;
    return readAll(fd, st.size);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function mtimeOf(path: string): number {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The hub-side routes of one local message: none when it stays on this machine. */
function routesOf(host: string, dir: string, text: string, hostOf: (id: string) => string | undefined): Route[] {
  const scope = scopeOfDirName(dir);
  if (!scope) return [];
  if (scope.kind === 'open') return [{ origin: host, target: { kind: 'bcast' } }];
  if (scope.kind === 'channel') return [{ origin: host, target: { kind: 'chan', name: scope.name } }];
  const env = parseSignal(text.endsWith('\n') ? text.slice(0, -1) : text);
  if (!env?.to) return [];
  const hosts = new Set<string>();
  for (const id of addressees(env.to)) {
    const h = hostOf(id);
    if (h !== undefined && h !== host) hosts.add(h);
  }
  return [...hosts].sort().map((h) => ({ origin: host, target: { kind: 'tray', host: h, key: scope.key } }));
}

export class Outbox {
  private readonly dirs = new Map<string, DirState>();
  /** Published and not yet acknowledged, by dir/id. */
  private readonly inflight = new Set<string>();
  /** Found and not yet acknowledged (or parked), by dir/id: when this relay first found each. */
  private readonly found = new Map<string, number>();
  /** The directories the last scan saw (the relay watches each). */
  dirNames: string[] = [];
  /** The cursor moved since it was last written. */
  cursorChanged = false;

  constructor(
    private readonly root: string,
    private readonly host: string,
    private readonly imported: ImportedSet,
    readonly cursor: Cursor,
    private readonly hostOf: (id: string) => string | undefined,
  ) {}

  private floor(dir: string): number {
    return Math.max(this.cursor.since, (this.cursor.dirs[dir] ?? this.cursor.since) - SLACK_MS);
  }

  /** Directories whose changes the index left unexplained: when each is due for a full listing. */
  private readonly rechecks = new Map<string, number>();
  /** Directories with ids to look at again (a publish failed). */
  private readonly retrying = new Set<string>();
  /** The next scan looks at every directory (the first, and after a rewind). */
  private everywhere = true;

  /** When a directory whose changes the index left unexplained is due for a full listing. */
  get recheckAt(): number {
    let at = Number.POSITIVE_INFINITY;
    for (const t of this.rechecks.values()) if (t < at) at = t;
    return at;
  }

  /**
   * New local messages to publish, oldest first per directory. `only`: the directories to
   * look at (by name; those with a failed publish to try again are looked at too), for a
   * scan woken by their events; without it, every directory under signals/ is listed and
   * looked at. A message costs the relay one directory's look, however many trays and
   * channels the bus has.
   */
  scan(now: number, only?: ReadonlySet<string>): Pending[] {
    const out: Pending[] = [];
    let names: string[];
    if (only === undefined || this.everywhere) {
      try {
        names = readdirSync(signalsDir(this.root)).sort();
      } catch {
        return out;
      }
      this.everywhere = false;
      this.dirNames = names.filter((n) => scopeOfDirName(n) !== null);
      // A directory gone since (a dissolved channel, a cleanup) is due for nothing.
      const present = new Set(this.dirNames);
      for (const d of this.rechecks.keys()) if (!present.has(d)) this.rechecks.delete(d);
      for (const d of this.retrying) if (!present.has(d)) this.retrying.delete(d);
    } else names = [...new Set([...only, ...this.retrying])].sort();
    for (const dir of names) {
      if (!scopeOfDirName(dir)) continue;
      const path = join(signalsDir(this.root), dir);
      let st = this.dirs.get(dir);
      if (!st) {
        st = { follow: newTailState(), done: new Set(), again: new Set() };
        this.dirs.set(dir, st);
      }
      const floor = this.floor(dir);
      const candidates = this.candidates(dir, path, st, now);
      st.again.clear();
      this.retrying.delete(dir);
      for (const id of candidates) {
        if (st.done.has(id) || this.inflight.has(`${dir}/${id}`)) continue;
        if (this.imported.has(dir, id)) {
          st.done.add(id);
          continue;
        }
        const file = join(path, `${id}${SIGNAL_EXT}`);
        const timeMs = idTime(id) ?? mtimeOf(file);
        if (timeMs < floor) continue;
        const data = readBytes(file);
        if (!data) {
          st.done.add(id);
          this.found.delete(`${dir}/${id}`);
          continue;
        }
        const routes = routesOf(this.host, dir, data.toString('utf8'), this.hostOf);
        if (routes.length === 0) {
          st.done.add(id);
          this.found.delete(`${dir}/${id}`);
          continue;
        }
        // The sidecar travels with its message (written before it, so it is there now).
        const sig = readBytes(join(path, `${id}${SIG_EXT}`));
        const extra: Pick<Pending, 'sig' | 'signer'> = {};
        if (sig) {
          extra.sig = sig;
          const keyId = /^key (\S+)$/m.exec(sig.toString('utf8'))?.[1];
          const node = /\|from_id:([^|]+)\|/.exec(data.toString('utf8'))?.[1];
          if (keyId && node) extra.signer = { node, keyId };
        }
        this.inflight.add(`${dir}/${id}`);
        if (!this.found.has(`${dir}/${id}`)) this.found.set(`${dir}/${id}`, now);
        for (const route of routes) out.push({ dir, id, subject: subjectFor(route), msgId: dedupId(id, route), data, timeMs, ...extra });
      }
    }
    return out;
  }

  /**
   * The ids to look at in one directory. Each writer appends its ids to the index, so those
   * are read from its tail. A full listing is what finds a message written without a line
   * (an older attend, a file put there by hand), but it costs the whole history: it is made
   * when the index cannot be followed, and when it has left the directory's changes
   * unexplained for UNEXPLAINED_MS (`recheckAt` tells the caller when to scan again for that;
   * tools/bus/store/follower.ts followTail).
   */
  private candidates(dir: string, path: string, st: DirState, now: number): string[] {
    const f = followTail(path, st.follow, { now, patience: UNEXPLAINED_MS, every: CHECK_MS });
    if (f.via === 'index' && f.recheckAt !== undefined) this.rechecks.set(dir, f.recheckAt);
    else this.rechecks.delete(dir);
    if (f.via !== 'index') return f.ids;
    return [...new Set([...f.ids, ...st.again])].sort();
  }

  /** Every route of this message was acknowledged by the hub. */
  done(p: Pick<Pending, 'dir' | 'id' | 'timeMs'>): void {
    this.inflight.delete(`${p.dir}/${p.id}`);
    this.found.delete(`${p.dir}/${p.id}`);
    const st = this.dirs.get(p.dir);
    st?.done.add(p.id);
    if (p.timeMs > (this.cursor.dirs[p.dir] ?? 0)) {
      this.cursor.dirs[p.dir] = p.timeMs;
      this.cursorChanged = true;
    }
  }

  /** Publishing failed: look again on the next scan. */
  retry(p: Pick<Pending, 'dir' | 'id'>): void {
    this.inflight.delete(`${p.dir}/${p.id}`);
    // The index already moved past it: remember it for the next scan.
    this.dirs.get(p.dir)?.again.add(p.id);
    this.retrying.add(p.dir);
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Local messages found and not yet acknowledged, and when the oldest of them was found. */
  get unacked(): { count: number; since: number | null } {
    let since: number | null = null;
    for (const t of this.found.values()) if (since === null || t < since) since = t;
    return { count: this.found.size, since };
  }

  /**
   * The hub lost its store: offer again every local message since `since` (the cursor goes
   * back, and each directory is listed afresh). The hub's duplicate window and the
   * receivers' imported log absorb what they already had.
   */
  rewind(since: number): void {
    this.dirs.clear();
    this.rechecks.clear();
    this.retrying.clear();
    this.everywhere = true;
    for (const d of Object.keys(this.cursor.dirs)) this.cursor.dirs[d] = Math.min(this.cursor.dirs[d]!, since);
    this.cursorChanged = true;
  }

  /** Forget handled ids far below every floor (memory stays bounded). */
  prune(): void {
    for (const [dir, st] of this.dirs) {
      const floor = this.floor(dir) - SLACK_MS;
      for (const id of st.done) if ((idTime(id) ?? Infinity) < floor) st.done.delete(id);
    }
  }
}
