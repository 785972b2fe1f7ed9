// What wakes the outbound loop: a change in a watched directory under signals/, the relay
// stopping, the connection coming back, or a timeout (the slow poll that covers missed
// events). A wake while the loop is busy is remembered, so its next wait returns at once.

import { type FSWatcher, watch } from 'node:fs';
import { INDEX_NAME, SIGNAL_EXT } from '../bus/store/index.js';
import { SIG_EXT } from '../bus/trust/index.js';

/**
 * A message renamed in is looked at once its index line is there: the line's own event wakes
 * the loop at once, and this is how long the rename alone waits for it (a file written
 * without a line, by hand or by an older attend, is found that much later).
 */
const LINE_GRACE_MS = 25;

export class Wake {
  private resolve: (() => void) | null = null;
  private dirty = false;
  /** The timeout of the wait under way: cleared by a wake, so it cannot end a later wait. */
  private timer: NodeJS.Timeout | null = null;
  private readonly watchers = new Map<string, FSWatcher>();
  private grace: NodeJS.Timeout | null = null;

  /**
   * `own(dir, name)`: the event is this relay's own import (tools/relay/own-writes.ts), which
   * has nothing to publish, so it wakes nothing.
   */
  constructor(private readonly own: (dir: string, name: string) => boolean = () => false) {}

  /** Something changed: the loop looks again now (or as soon as it waits). */
  readonly wake = (): void => {
    // The look this wakes covers whatever was renamed before it.
    if (this.grace) clearTimeout(this.grace);
    this.grace = null;
    this.dirty = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const r = this.resolve;
    this.resolve = null;
    r?.();
  };

  /** A round starts: what woke the loop so far is what it is about to look at. */
  clear(): void {
    this.dirty = false;
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
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null) return this.wake();
        const n = String(name);
        if (this.own(dir, n)) return;
        if (n === INDEX_NAME) this.wake();
        // A signature sidecar comes just before its message, and is never published alone.
        else if (n.endsWith(SIGNAL_EXT) || n.endsWith(SIG_EXT)) this.soon();
        else if (!n.startsWith('.')) this.wake();
      });
      w.on('error', () => {
        this.watchers.delete(dir);
        w.close();
      });
      this.watchers.set(dir, w);
      return true;
    } catch {
      // not there yet
      return false;
    }
  }

  /** A rename without its line yet: a look after LINE_GRACE_MS, unless a wake comes first. */
  private soon(): void {
    if (this.grace) return;
    this.grace = setTimeout(() => {
      this.grace = null;
      this.wake();
    }, LINE_GRACE_MS);
    this.grace.unref();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.grace) clearTimeout(this.grace);
    this.grace = null;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
