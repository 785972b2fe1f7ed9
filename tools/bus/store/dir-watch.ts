// A directory to hear about without polling it (the relay's session records, presence
// directory, channel store and published keys; every reader that waits, through wake.ts),
// which may not exist yet on a fresh machine: while it is missing, the nearest ancestor that
// exists is watched for the next step towards it, and the watch moves down as the
// directories appear. What a watch cannot see (a process that died, a heartbeat gone stale)
// is still the caller's slow poll.

import { existsSync, type FSWatcher, watch } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';

export class DirWatch {
  private w: FSWatcher | null = null;
  private at: string | null = null;
  private closed = false;

  /**
   * `onChange(name)` for each event on an entry of `dir` (name null when the platform gives
   * none), and `onChange(null)` once the directory appeared while it was missing.
   */
  constructor(
    private readonly dir: string,
    private readonly onChange: (name: string | null) => void,
    /** Whether the watch alone keeps the process running (a reader that waits on nothing else). */
    private readonly persistent = false,
  ) {
    this.arm();
  }

  /** The directory is watched, or the ancestor where it would be made: no change is missed. */
  get watching(): boolean {
    return this.w !== null;
  }

  /** The directory watched now: the one asked for, an ancestor, or null. */
  get watched(): string | null {
    return this.w === null ? null : this.at;
  }

  /**
   * Watch again when the watch went (an error, the directory removed), or when the next step
   * down was made between a failed watch and its ancestor's: the caller's poll calls it.
   */
  ensure(): void {
    if (this.w === null || (this.at !== this.dir && this.at !== null && existsSync(join(this.at, this.stepFrom(this.at))))) this.rearm();
  }

  /** Watch as far down as exists now; reaching the directory itself is a change (it appeared). */
  private rearm(): void {
    const before = this.at === this.dir;
    this.arm();
    if (!before && this.at === this.dir) this.onChange(null);
  }

  private stepFrom(d: string): string {
    return relative(d, this.dir).split(sep)[0]!;
  }

  private arm(): void {
    this.w?.close();
    this.w = null;
    this.at = null;
    if (this.closed) return;
    for (let d = this.dir; ; d = dirname(d)) {
      // The entry of `d` on the way down to the directory (null: `d` is the directory).
      const step = d === this.dir ? null : this.stepFrom(d);
      try {
        const w = watch(d, { persistent: this.persistent }, (_event, name) => {
          if (this.w !== w) return;
          // The watched directory itself removed (said as an event on its own name): move up.
          if (name !== null && String(name) === basename(d) && !existsSync(d)) return this.rearm();
          if (step === null) return this.onChange(name === null ? null : String(name));
          if (name !== null && String(name) !== step) return;
          this.rearm();
        });
        // A watch that fails is gone: said as a change, so a caller that re-arms (ensure) at
        // each change watches again at once.
        w.on('error', () => {
          w.close();
          if (this.w !== w) return;
          this.w = null;
          this.onChange(null);
        });
        // Made between the failed watch below and this one: the caller's poll (ensure) finds it.
        this.w = w;
        this.at = d;
        return;
      } catch {
        if (dirname(d) === d) return;
      }
    }
  }

  close(): void {
    this.closed = true;
    this.w?.close();
    this.w = null;
  }
}
