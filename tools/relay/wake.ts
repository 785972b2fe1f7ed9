// What wakes the outbound loop: a change in a watched directory under signals/, the relay
// stopping, the connection coming back, or a timeout (the slow poll that covers missed
// events). A wake while the loop is busy is remembered, so its next wait returns at once.
// A wake says where to look: the directories whose events woke it, or everywhere (`all`:
// the poll, a new directory, anything not from one directory), so a message costs the
// relay a look at its own directory, not at every tray and channel on the bus.

import { type FSWatcher, watch } from 'node:fs';
import { INDEX_NAME, SIGNAL_EXT } from '../bus/store/index.js';
import { SIG_EXT } from '../bus/trust/index.js';

/**
 * A message renamed in is looked at once its index line is there: the line's own event wakes
 * the loop at once, and this is how long the rename alone waits for it (a file written
 * without a line, by hand or by an older attend, is found that much later).
 */
const LINE_GRACE_MS = 25;

/** Where a round looks: every directory, or those whose events woke it. */
export type Woken = 'all' | ReadonlySet<string>;

export class Wake {
  private resolve: (() => void) | null = null;
  private dirty = false;
  /** Where the next round looks (a new Wake's first round looks everywhere). */
  private where: 'all' | Set<string> = 'all';
  /** The directories whose renames the grace timer is for. */
  private graceDirs = new Set<string>();
  /** The directory whose events mean a new directory, not a message: set by `top`. */
  private topDir: string | null = null;
  /** The timeout of the wait under way: cleared by a wake, so it cannot end a later wait. */
  private timer: NodeJS.Timeout | null = null;
  private readonly watchers = new Map<string, FSWatcher>();
  private grace: NodeJS.Timeout | null = null;

  /**
   * `own(dir, name)`: the event is this relay's own import (tools/relay/own-writes.ts), which
   * has nothing to publish, so it wakes nothing.
   */
  constructor(private readonly own: (dir: string, name: string) => boolean = () => false) {}

  /**
   * Something changed in `dir` (without one: anywhere): the loop looks again now (or as soon
   * as it waits).
   */
  readonly wake = (dir?: string): void => {
    if (dir === undefined) this.where = 'all';
    else if (this.where !== 'all') this.where.add(dir);
    // A look everywhere covers whatever was renamed before it; one at some directories,
    // what was renamed there.
    if (this.where === 'all') this.graceDirs.clear();
    else this.graceDirs.delete(dir!);
    if (this.grace && this.graceDirs.size === 0) {
      clearTimeout(this.grace);
      this.grace = null;
    }
    this.dirty = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const r = this.resolve;
    this.resolve = null;
    r?.();
  };

  /**
   * A round starts: what woke the loop so far is what it is about to look at. Returns where
   * to look: every directory, or the ones whose events came since the last round.
   */
  clear(): Woken {
    this.dirty = false;
    const where = this.where;
    this.where = new Set();
    return where;
  }

  /**
   * Watch `dir`, the directory the others are in: its events are new directories, a look
   * everywhere. False when it could not be watched.
   */
  top(dir: string): boolean {
    this.topDir = dir;
    return this.watch(dir);
  }

  /** Woken since the round started. */
  get pending(): boolean {
    return this.dirty;
  }

  /**
   * Until a wake, or `ms` (which counts as one). The timeout goes with the wait: left armed
   * after a wake, every wait of a burst would end a later one (a relay at rest after traffic
   * scanned every few milliseconds for a poll's length, one stale timeout after another).
   */
  wait(ms: number): Promise<void> {
    return new Promise<void>((r) => {
      this.resolve = r;
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.wake(), ms);
      this.timer.unref();
    });
  }

  /**
   * Watch one directory (once; a directory that is not there yet is tried on the next call).
   * False when it could not be watched: only the slow poll will see what is written there.
   */
  watch(dir: string): boolean {
    if (this.watchers.has(dir)) return true;
    try {
      // Temporaries are dot-files; a new message is `<id>.signal`, a new directory its own
      // name, and the index hint's line (`.index`) what the scan follows. Only those are worth
      // a scan. The index matters most: its line is appended just after the message's rename,
      // so a scan woken by the rename alone would come before it and find nothing new, then
      // run again for the line. The rename waits LINE_GRACE_MS for the line instead.
      const at = dir === this.topDir ? undefined : dir;
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null) return this.wake(at);
        const n = String(name);
        if (this.own(dir, n)) return;
        if (n === INDEX_NAME) this.wake(at);
        // A signature sidecar comes just before its message, and is never published alone.
        else if (n.endsWith(SIGNAL_EXT) || n.endsWith(SIG_EXT)) this.soon(at);
        else if (!n.startsWith('.')) this.wake(at);
      });
      w.on('error', () => {
        this.watchers.delete(dir);
        w.close();
      });
      this.watchers.set(dir, w);
      // What was written there after the look that found the directory and before this
      // watch began woke nothing: the next round looks there once more.
      if (at !== undefined) this.wake(at);
      return true;
    } catch {
      // not there yet
      return false;
    }
  }

  /** A rename in `dir` without its line yet: a look there after LINE_GRACE_MS, unless a wake comes first. */
  private soon(dir: string | undefined): void {
    if (dir === undefined) return this.wake();
    this.graceDirs.add(dir);
    if (this.grace) return;
    this.grace = setTimeout(() => {
      this.grace = null;
      const dirs = [...this.graceDirs];
      this.graceDirs.clear();
      for (const d of dirs) this.wake(d);
    }, LINE_GRACE_MS);
    this.grace.unref();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.grace) clearTimeout(this.grace);
    this.grace = null;
    this.graceDirs.clear();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
