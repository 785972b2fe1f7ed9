// What wakes the outbound loop: a change in a watched directory under signals/, the relay
// stopping, the connection coming back, or a timeout (the slow poll that covers missed
// events). A wake while the loop is busy is remembered, so its next wait returns at once.

import { type FSWatcher, watch } from 'node:fs';
import { INDEX_NAME } from '../bus/store/index.js';

export class Wake {
  private resolve: (() => void) | null = null;
  private dirty = false;
  /** The timeout of the wait under way: cleared by a wake, so it cannot end a later wait. */
  private timer: NodeJS.Timeout | null = null;
  private readonly watchers = new Map<string, FSWatcher>();

  /** Something changed: the loop looks again now (or as soon as it waits). */
  readonly wake = (): void => {
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
      // so a scan woken by the rename alone can come before it and find nothing new; the
      // line's own event wakes the loop again, and no settling delay is needed.
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || name === INDEX_NAME || !String(name).startsWith('.')) this.wake();
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

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
