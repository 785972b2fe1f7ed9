// What arrives in the scope directories after the first load: each directory is read by the
// store's one follower (tools/bus/store/follower.ts: from its index hint when that explains
// every change, else a full listing), and what it names that is neither history (history.ts)
// nor seen before is read, admitted by the gate and handed on. The scope watch (scope-watch.ts)
// says when and where to look.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { follow, type IndexState, type Message, readMessage, type Reporter, SIGNAL_EXT, scopeOfDirName, signalsDir } from '../../bus/store/index.js';
import type { History } from './history.js';

interface ArrivalDeps {
  root: string;
  /** Wall-clock ms, for the follower. */
  now(): number;
  reporter: Reporter;
  history: Pick<History, 'has' | 'mark' | 'expectListing'>;
  admit(m: Message | null): m is Message;
  /** Each new message, once (batch.ts gathers them for the screen). */
  arrived(m: Message): void;
}

export interface Arrivals {
  /** Look at scope directory `dir` (its name under signals/) through the follower. */
  scanDir(dir: string): void;
  /** A watch event named `name` in `dir`: a new message file, perhaps. */
  onFile(dir: string, name: string): void;
}

export function createArrivals(deps: ArrivalDeps): Arrivals {
  const { root, reporter, history } = deps;
  const sigDir = signalsDir(root);
  const known = new Set<string>(); // `${dir}/${id}` looked at since the first load
  // Where the follower left each directory; it starts at the first load's mark.
  const states = new Map<string, IndexState | undefined>();

  function onFile(dir: string, name: string): void {
    if (!name.endsWith(SIGNAL_EXT) || name.startsWith('.')) return;
    const id = name.slice(0, -SIGNAL_EXT.length);
    const key = `${dir}/${id}`;
    if (known.has(key)) return;
    // A watch event on a file of the history (a touch, a chmod) is not an arrival.
    if (history.has(dir, id)) {
      known.add(key);
      return;
    }
    const scope = scopeOfDirName(dir);
    if (!scope) return;
    if (!existsSync(join(sigDir, dir, name))) return; // a rename away, or a purge
    known.add(key);
    const m = readMessage(root, scope, id, reporter);
    if (deps.admit(m)) deps.arrived(m);
  }

  function scanDir(dir: string): void {
    const prev = states.has(dir) ? states.get(dir) : history.mark(dir);
    const f = follow(join(sigDir, dir), prev, { now: deps.now(), reporter });
    if (f.via === 'listing') history.expectListing(dir);
    // A directory made after the first load has no mark: everything in it is news, from
    // here on followed by its index.
    states.set(dir, f.state);
    for (const id of f.ids) if (!known.has(`${dir}/${id}`)) onFile(dir, `${id}${SIGNAL_EXT}`);
  }

  return { scanDir, onFile };
}
