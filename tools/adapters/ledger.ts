// An outlet's progress, like every conduit's delivery ledger (tools/bus/delivery): which bus
// message ids it has delivered (with the outlet's own reference, a Telegram message_id, so a
// reply in the app finds the bus message it answers), how far the walk has come, and what
// waits for a retry and why. Never a copy of a message: ids, times and errors only.
//
// sent.log is append-only, one JSON line per event of a delivery: `{id, sending: true}`,
// fsynced before each request; `{id, unsent: true}` when the outlet surely did not take it (it
// answered no, or could not be connected to); `{id, ref?}`, fsynced after the outlet said yes
// and before the next message is tried. A SIGKILL loses at most the answer to the one request
// in flight: its `sending` line has no `unsent` or delivered line after it, so the next run
// knows it may have been shown, and sends it again marked as a possible repeat (the webhook's
// `mayRepeat`, the others' "(may repeat)" prefix), with the same Idempotency-Key (the message
// id) and ntfy sequence id, so a receiver or client that keys on them shows it once.
//
// It does not grow with the history: when a run opens a log of more than twice LEDGER_KEEP
// lines, it is rewritten (a new file renamed into place) with the newest LEDGER_KEEP
// deliveries and every request that may have been shown. What is dropped is older than any
// walk reaches (the walk stops at the cursor less the grace window); a reply in the app to
// a message that old is refused as not sent to this outlet.

import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDir, FILE_MODE, writeFileAtomic } from '../bus/store/index.js';
import { adaptersDir } from './config.js';

export interface Waiting {
  id: string;
  attempts: number;
  /** Wall-clock ms of the next try. */
  next: number;
  error: string;
  since: number;
}

export interface OutletState {
  outlet: string;
  pid: number;
  updated: number;
  delivered: number;
  waiting: Waiting[];
  /** The listener's address, when this run serves replies. */
  listen?: string;
}

export const stateDir = (root: string, outlet: string) => join(adaptersDir(root), 'state', outlet);

export interface Ledger {
  has(id: string): boolean;
  /** The bus id a reference of the outlet's (a Telegram message_id) stands for. */
  byRef(ref: string): string | undefined;
  /** The newest id delivered (a reply without a reference answers it). */
  newest(): string | undefined;
  record(id: string, ref?: string): void;
  /**
   * Written (fsynced) before a request: true when an earlier request for this id may have
   * reached the outlet (it was in flight at a crash, or ended with no answer), so this one may
   * show it twice and is marked so.
   */
  begin(id: string): boolean;
  /** The outlet surely did not take the request begun for this id (it said no, or was not reached). */
  abandon(id: string): void;
  size(): number;
  close(): void;
}

/** Deliveries a compacted sent.log keeps (with their references, for replies). */
export const LEDGER_KEEP = 10_000;

export function openLedger(root: string, outlet: string, keep = LEDGER_KEEP): Ledger {
  const dir = stateDir(root, outlet);
  ensureDir(dir);
  const file = join(dir, 'sent.log');
  const ids = new Set<string>();
  const refs = new Map<string, string>();
  // Requests begun with no answer written yet, and ids one of whose requests may have been shown.
  const open = new Set<string>();
  const maybe = new Set<string>();
  let newest: string | undefined;
  const begun = (id: string) => {
    if (open.has(id)) maybe.add(id);
    open.add(id);
  };
  const done = (id: string) => {
    open.delete(id);
    maybe.delete(id);
  };
  let torn = false;
  let lines = 0;
  // A delivery's reference, by id (the compaction writes it back).
  const refOf = new Map<string, string>();
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8');
    torn = text.length > 0 && !text.endsWith('\n');
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      lines++;
      try {
        const r = JSON.parse(line) as { id?: unknown; ref?: unknown; sending?: unknown; unsent?: unknown };
        if (typeof r.id !== 'string') continue;
        if (r.sending === true) begun(r.id);
        else if (r.unsent === true) open.delete(r.id);
        else {
          done(r.id);
          ids.add(r.id);
          if (newest === undefined || r.id > newest) newest = r.id;
          if (typeof r.ref === 'string') {
            refs.set(r.ref, r.id);
            refOf.set(r.id, r.ref);
          }
        }
      } catch {
        // A torn last line (killed mid-append): a delivery's line is tried again; a `sending`
        // line was not fsynced, so its request was never made.
      }
    }
  }
  // What was in flight when the last run ended may have been shown.
  for (const id of open) if (!ids.has(id)) maybe.add(id);
  if (lines > 2 * keep) {
    const kept = [...ids].sort().slice(-keep);
    ids.clear();
    refs.clear();
    const out: string[] = [];
    for (const id of kept) {
      ids.add(id);
      const ref = refOf.get(id);
      if (ref !== undefined) refs.set(ref, id);
      out.push(JSON.stringify(ref === undefined ? { id } : { id, ref }));
    }
    // One open `sending` line reads back as a request that may have been shown.
    for (const id of maybe) out.push(JSON.stringify({ id, sending: true }));
    writeFileAtomic(file, out.length > 0 ? `${out.join('\n')}\n` : '');
    torn = false;
  }
  const fd = openSync(file, 'a', FILE_MODE);
  // A torn last line is ended, so the next line is not glued to it (and lost with it).
  if (torn) appendFileSync(fd, '\n');
  const append = (line: object, sync: boolean) => {
    appendFileSync(fd, `${JSON.stringify(line)}\n`);
    if (sync) fsyncSync(fd);
  };
  return {
    has: (id) => ids.has(id),
    byRef: (ref) => refs.get(ref),
    newest: () => newest,
    record(id, ref) {
      append(ref === undefined ? { id } : { id, ref }, true);
      done(id);
      ids.add(id);
      if (newest === undefined || id > newest) newest = id;
      if (ref !== undefined) refs.set(ref, id);
    },
    begin(id) {
      append({ id, sending: true }, true);
      begun(id);
      return maybe.has(id);
    },
    abandon(id) {
      // Not fsynced: lost, it only marks the next try as a possible repeat.
      append({ id, unsent: true }, false);
      open.delete(id);
    },
    size: () => ids.size,
    close: () => closeSync(fd),
  };
}

/** How far the walk has come (ms): messages older than this less the grace window are not read again. */
export function readCursor(root: string, outlet: string): number | undefined {
  try {
    const r = JSON.parse(readFileSync(join(stateDir(root, outlet), 'cursor.json'), 'utf8')) as { through?: unknown };
    return typeof r.through === 'number' ? r.through : undefined;
  } catch {
    return undefined;
  }
}

export function writeCursor(root: string, outlet: string, through: number): void {
  writeFileAtomic(join(stateDir(root, outlet), 'cursor.json'), `${JSON.stringify({ through })}\n`);
}

export function writeState(root: string, s: OutletState): void {
  ensureDir(stateDir(root, s.outlet));
  writeFileAtomic(join(stateDir(root, s.outlet), 'status.json'), `${JSON.stringify(s)}\n`);
}

/** Every outlet's last written state, for `attend status` and `attend adapter status`. */
export function readStates(root: string): OutletState[] {
  let dir: string;
  try {
    dir = join(adaptersDir(root), 'state');
  } catch {
    return []; // no key directory this process may read (a sandboxed status): no outlets to tell of
  }
  if (!existsSync(dir)) return [];
  const out: OutletState[] = [];
  for (const name of readdirSync(dir).sort()) {
    try {
      out.push(JSON.parse(readFileSync(join(dir, name, 'status.json'), 'utf8')) as OutletState);
    } catch {
      // Not written yet.
    }
  }
  return out;
}

/** Claim one runner per bus: a second `attend adapter run` is refused while the first lives. */
export function lockFile(root: string): string {
  return join(adaptersDir(root), 'run.pid');
}

export function tryLock(root: string, pid: number, alive: (pid: number) => boolean): number | null {
  const file = lockFile(root);
  ensureDir(adaptersDir(root));
  for (let i = 0; i < 2; i++) {
    try {
      const fd = openSync(file, 'wx', FILE_MODE);
      appendFileSync(fd, `${pid}\n`);
      closeSync(fd);
      return null;
    } catch {
      const other = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(other) && other > 0 && other !== pid && alive(other)) return other;
      // A runner that died (SIGKILL) left its pid: take over.
      writeFileAtomic(file, `${pid}\n`);
      return null;
    }
  }
  return null;
}
