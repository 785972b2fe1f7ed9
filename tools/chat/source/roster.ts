// The roster poller: who is live and which channels exist (with their members), re-read every
// `everyMs` and on demand (after a slash command that changes channels, or a failed send).
// A read that fails is said on the status line; the last good roster stays on screen.

import type { Peer } from '../../bus/presence/index.js';
import type { ChannelInfo } from '../actions.js';
import type { Timers } from './timers.js';

const ROSTER_MS = 2000;

interface RosterDeps {
  read: { peers(): Peer[]; channels(): ChannelInfo[] };
  timers: Pick<Timers, 'every'>;
  everyMs?: number;
  /** Told before the channels are read, so a failing channel read still updates who is live. */
  peers(peers: Peer[]): void;
  channels(channels: ChannelInfo[]): void;
  failed(text: string): void;
}

interface RosterPoller {
  /** Read now; false (and `failed`) when it could not. */
  refresh(): boolean;
  start(): void;
  stop(): void;
}

export function createRosterPoller(deps: RosterDeps): RosterPoller {
  let cancel: (() => void) | null = null;
  const refresh = () => {
    try {
      deps.peers(deps.read.peers());
      deps.channels(deps.read.channels());
      return true;
    } catch (err) {
      deps.failed(`cannot read the roster: ${(err as Error).message}`);
      return false;
    }
  };
  return {
    refresh,
    start() {
      cancel ??= deps.timers.every(deps.everyMs ?? ROSTER_MS, refresh);
    },
    stop() {
      cancel?.();
      cancel = null;
    },
  };
}
