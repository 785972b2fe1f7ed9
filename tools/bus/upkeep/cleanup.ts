// `attend cleanup` (issue #3 §8). Plan first, then apply the plan, so a dry run shows exactly
// what a real run removes. Rules that hold in both:
//   - a tray's project is judged by the slug part of its key against <claude dir>/projects/;
//   - the tray of a live session (a session record or a fresh presence, sensor included) is
//     never touched;
//   - `_broadcast/` is never touched, nor a channel directory whose channel has an entry;
//   - no file younger than the grace period is removed (mtime);
//   - only signal files and attend's own temporaries are removed; a directory goes only
//     when it is empty.

import { sidecarPath } from '../trust/signing.js';
import { existsSync, lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { slugOfKey } from '../../wire/names.js';
import { type ChannelStore, pruneStore, readChannels, updateChannels } from '../channels/membership.js';
import { INDEX_NAME } from '../store/dir-index.js';
import { TMP_DIR } from '../store/messages.js';
import { removeCache } from '../store/listing-cache.js';
import { signalsDir, stateDir } from '../store/layout.js';
import { owedDir } from '../delivery/owed.js';
import { HEARTBEAT_FRESH_MS, presenceDir } from '../presence/heartbeats.js';
import { readImported } from '../presence/remote.js';
import { OWNER_FILE } from '../store/lock.js';
import { processAlive } from '../../identity/system.js';

export const CLEANUP_GRACE_MS = 60 * 60_000;

export type CleanupKind = 'message' | 'temporary' | 'tray' | 'channel-dir' | 'member' | 'channel' | 'state';

export interface CleanupItem {
  kind: CleanupKind;
  /** Path relative to the bus root, or `#channel` / `#channel member` for store entries. */
  what: string;
  bytes: number;
  reason: string;
}

export interface CleanupOptions {
  projectsDir: string;
  now: number;
  graceMs?: number;
  /** Also remove stale per-session state (old presence, owed and surfaced files of sessions that are gone). */
  all?: boolean;
  isAlive(id: string): boolean;
  /** Tray keys of live sessions: kept even before Claude Code made their project folder. */
  liveKeys: Set<string>;
}

export interface CleanupPlan {
  items: CleanupItem[];
  notes: string[];
  bytes: number;
}

interface FileInfo {
  name: string;
  bytes: number;
  mtimeMs: number;
  isFile: boolean;
  isDir: boolean;
}

function listDir(dir: string): FileInfo[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: FileInfo[] = [];
  for (const name of names) {
    try {
      const st = lstatSync(join(dir, name));
      out.push({ name, bytes: st.size, mtimeMs: st.mtimeMs, isFile: st.isFile(), isDir: st.isDirectory() });
    } catch {
      // vanished
    }
  }
  return out;
}

const isSignal = (n: string) => n.endsWith('.signal') && !n.startsWith('.');
const isTemporary = (n: string) => n.startsWith('.') && n.endsWith('.tmp');

/**
 * Files in `dir` that may go (signals and temporaries older than the grace period), and
 * whether the directory would then be empty.
 */
function sweepDir(root: string, dirName: string, reason: string, opts: { now: number; grace: number; imported: Set<string> }, items: CleanupItem[]): boolean {
  const dir = join(signalsDir(root), dirName);
  let remaining = 0;
  let index: FileInfo | undefined;
  for (const f of listDir(dir)) {
    if (f.name === INDEX_NAME && f.isFile) {
      index = f;
      continue;
    }
    const old = opts.now - f.mtimeMs >= opts.grace;
    // A message imported from another machine (tools/relay) belongs to a project or channel
    // there: this machine's liveness says nothing about it (issue 13).
    if (f.isFile && isSignal(f.name) && opts.imported.has(`${dirName}/${f.name.slice(0, -'.signal'.length)}`)) remaining++;
    else if (f.isFile && old && isSignal(f.name)) items.push({ kind: 'message', what: `signals/${dirName}/${f.name}`, bytes: f.bytes, reason });
    else if (f.isFile && old && isTemporary(f.name)) items.push({ kind: 'temporary', what: `signals/${dirName}/${f.name}`, bytes: f.bytes, reason: 'leftover of an interrupted write' });
    else remaining++;
  }
  if (remaining === 0 && index) items.push(indexItem(dirName, index));
  return remaining === 0;
}

/** The index hint (tools/bus/store/dir-index.ts) goes with its directory, never on its own. */
function indexItem(dirName: string, f: FileInfo): CleanupItem {
  return { kind: 'temporary', what: `signals/${dirName}/${f.name}`, bytes: f.bytes, reason: 'delivery index of a directory being removed' };
}

export function planCleanup(root: string, opts: CleanupOptions): CleanupPlan {
  const grace = opts.graceMs ?? CLEANUP_GRACE_MS;
  const items: CleanupItem[] = [];
  const notes: string[] = [];
  const projectsKnown = existsSync(opts.projectsDir);
  if (!projectsKnown) notes.push(`${opts.projectsDir} does not exist: no tray is judged dead (is CLAUDE_CONFIG_DIR right?)`);
  const store: ChannelStore = readChannels(root);
  const imported = readImported(root);
  // Temporaries of interrupted writes (tools/bus/store/messages.ts writes them here).
  for (const f of listDir(join(signalsDir(root), TMP_DIR))) {
    if (f.isFile && isTemporary(f.name) && opts.now - f.mtimeMs >= grace) items.push({ kind: 'temporary', what: `signals/${TMP_DIR}/${f.name}`, bytes: f.bytes, reason: 'leftover of an interrupted write' });
  }
  for (const d of listDir(signalsDir(root))) {
    if (!d.isDir || d.name === '_broadcast' || d.name.startsWith('.')) continue;
    if (d.name.startsWith('@')) {
      const channel = d.name.slice(1);
      if (store.channels[channel]) continue;
      const empty = sweepDir(root, d.name, `#${channel} has no entry (left empty or dissolved)`, { now: opts.now, grace, imported }, items);
      if (empty) items.push({ kind: 'channel-dir', what: `signals/${d.name}/`, bytes: 0, reason: 'orphan channel directory' });
      continue;
    }
    if (d.name.startsWith('_')) continue;
    // A live session's tray is never touched, empty or not: its sensor watches the directory,
    // and removing it left direct messages unseen until the 30 s rescan (issue #10 item 3).
    if (opts.liveKeys.has(d.name)) continue;
    const slug = slugOfKey(d.name);
    const projectGone = projectsKnown && !existsSync(join(opts.projectsDir, slug));
    let empty: boolean;
    if (projectGone) empty = sweepDir(root, d.name, `project ${slug} is gone from ${opts.projectsDir}`, { now: opts.now, grace, imported }, items);
    else {
      const files = listDir(join(signalsDir(root), d.name));
      const index = files.find((f) => f.name === INDEX_NAME && f.isFile);
      empty = files.length === (index ? 1 : 0);
      if (empty && index) items.push(indexItem(d.name, index));
    }
    if (empty) items.push({ kind: 'tray', what: `signals/${d.name}/`, bytes: 0, reason: projectGone ? 'tray of a project that is gone' : 'empty tray' });
  }
  // Stale members and the empty unpinned channels they leave, judged on a copy.
  const copy = structuredClone(store);
  const pruned = pruneStore(copy, opts.isAlive);
  for (const m of pruned.members) items.push({ kind: 'member', what: `#${m.channel} ${m.id}`, bytes: 0, reason: 'session is gone' });
  for (const c of pruned.channels) items.push({ kind: 'channel', what: `#${c}`, bytes: 0, reason: 'empty and not pinned' });
  if (opts.all) planState(root, opts, grace, items);
  return { items, notes, bytes: items.reduce((n, i) => n + i.bytes, 0) };
}

// Per-session state is judged only for ids shaped like Claude Code session ids: a human's
// state (its username) is theirs to keep, whether or not they are in `attend chat` now.
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function planState(root: string, opts: CleanupOptions, grace: number, items: CleanupItem[]): void {
  // Lock owner files of processes that ended without removing theirs (tools/bus/store/lock.ts).
  const ledgers = listDir(join(stateDir(root), 'ledger')).filter((f) => f.isDir).map((f) => `state/ledger/${f.name}`);
  for (const rel of ['', 'state', 'state/owed', ...ledgers]) {
    for (const f of listDir(join(root, rel))) {
      const m = OWNER_FILE.exec(f.name);
      if (!m || !f.isFile || opts.now - f.mtimeMs < grace || processAlive(Number(m[1]), m[2])) continue;
      items.push({ kind: 'temporary', what: rel === '' ? f.name : `${rel}/${f.name}`, bytes: f.bytes, reason: 'lock owner file of a process that ended' });
    }
  }
  for (const f of listDir(presenceDir(root))) {
    const tilde = f.name.lastIndexOf('~');
    if (!f.isFile || !f.name.endsWith('.json') || tilde <= 0) continue;
    const id = safeDecode(f.name.slice(0, tilde));
    if (id === null || !SESSION_ID.test(id) || opts.isAlive(id)) continue;
    if (opts.now - f.mtimeMs < Math.max(grace, HEARTBEAT_FRESH_MS)) continue;
    items.push({ kind: 'state', what: `state/presence/${f.name}`, bytes: f.bytes, reason: 'heartbeat of a session that is gone' });
  }
  for (const [sub, dir, ext] of [
    ['owed', owedDir(root), '.json'],
    ['surfaced', join(stateDir(root), 'surfaced'), '.json'],
    // Ledgers and sensor claims of sessions that ended (issue #12 §7): nothing else bounds them.
    ['ledger', join(stateDir(root), 'ledger'), '.json'],
    ['sensor', join(stateDir(root), 'sensor'), '.pid'],
  ] as const) {
    for (const f of listDir(dir)) {
      // A ledger lives in a directory of its own (tools/bus/delivery/ledger.ts): its file goes, and
      // the directory with it once empty.
      if (sub === 'ledger' && f.isDir) {
        const id = safeDecode(f.name);
        if (id === null || !SESSION_ID.test(id) || opts.isAlive(id)) continue;
        for (const inner of listDir(join(dir, f.name))) {
          if (!inner.isFile || !LEDGER_FILE.test(inner.name) || opts.now - inner.mtimeMs < grace) continue;
          items.push({ kind: 'state', what: `state/ledger/${f.name}/${inner.name}`, bytes: inner.bytes, reason: 'state of a session that is gone' });
        }
        continue;
      }
      if (!f.isFile || !f.name.endsWith(ext) || opts.now - f.mtimeMs < grace) continue;
      const id = safeDecode(f.name.slice(0, -ext.length));
      if (id === null || !SESSION_ID.test(id) || opts.isAlive(id)) continue;
      items.push({ kind: 'state', what: `state/${sub}/${f.name}`, bytes: f.bytes, reason: 'state of a session that is gone' });
    }
  }
}

/** A session's ledger in its directory: the log, or the single file attend 0.4 to 0.6 wrote. */
const LEDGER_FILE = /^ledger\.jsonl?$/;

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** Remove what the plan lists. Returns what was actually removed (a file may have gone meanwhile). */
export function applyCleanup(root: string, plan: CleanupPlan, opts: Pick<CleanupOptions, 'isAlive' | 'now'>): CleanupItem[] {
  const done: CleanupItem[] = [];
  for (const item of plan.items) {
    if (item.kind === 'message' || item.kind === 'temporary' || item.kind === 'state') {
      try {
        unlinkSync(join(root, item.what));
        done.push(item);
      } catch {
        // already gone
      }
      if (item.what.startsWith('state/ledger/') && item.what.split('/').length === 4) {
        try {
          rmdirSync(join(root, dirname(item.what)));
        } catch {
          // not empty (a lock) or gone
        }
      }
      // A message's signature goes with it (issue 14), so its tray can be removed.
      if (item.kind === 'message' && item.what.endsWith('.signal')) {
        try {
          unlinkSync(join(root, sidecarPath(item.what)));
        } catch {
          // unsigned
        }
      }
    }
  }
  for (const item of plan.items) {
    if (item.kind === 'tray' || item.kind === 'channel-dir') {
      try {
        // rmdir fails on a directory that gained a file since the plan: it is kept.
        rmdirSync(join(root, item.what));
        done.push(item);
        removeCache(root, basename(item.what));
      } catch {
        // not empty any more, or gone
      }
    }
  }
  if (plan.items.some((i) => i.kind === 'member' || i.kind === 'channel')) {
    const pruned = updateChannels(root, (store) => pruneStore(store, opts.isAlive));
    for (const m of pruned.members) done.push({ kind: 'member', what: `#${m.channel} ${m.id}`, bytes: 0, reason: 'session is gone' });
    for (const c of pruned.channels) done.push({ kind: 'channel', what: `#${c}`, bytes: 0, reason: 'empty and not pinned' });
  }
  return done;
}
