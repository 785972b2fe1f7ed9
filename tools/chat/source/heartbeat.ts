// The chat's own presence (state/presence/<id>~chat.json): written at start and every
// HEARTBEAT_MS, removed when the chat ends, so others can address the operator while the chat
// is open. A failed write is skipped (a vanished bus: the status line says so) and the next
// beat tries again.

import { removePresence, writePresence } from '../../bus/presence/index.js';
import type { Timers } from './timers.js';

export const HEARTBEAT_MS = 30_000;

interface ChatPresenceDeps {
  root: string;
  me: { id: string; origin: string };
  pid: number;
  /** Wall-clock ms, written as the heartbeat. */
  now(): number;
  timers: Pick<Timers, 'every'>;
  /** The presence role: `chat`, or `web` for `attend web` (tools/web/), so each front end keeps its own record. */
  role?: 'chat' | 'web';
}

interface ChatPresence {
  /** Beat now, then every HEARTBEAT_MS. */
  start(): void;
  /** Stop beating and remove the presence; once, however often it is called. */
  stop(): void;
}

export function createChatPresence(deps: ChatPresenceDeps): ChatPresence {
  let cancel: (() => void) | null = null;
  let stopped = false;
  const beat = () => {
    try {
      writePresence(deps.root, { id: deps.me.id, kind: 'human', origin: deps.me.origin, heartbeat: deps.now(), pid: deps.pid, role: deps.role ?? 'chat' });
    } catch {
      // a vanished bus: the status line says so; the next beat tries again
    }
  };
  return {
    start() {
      beat();
      cancel = deps.timers.every(HEARTBEAT_MS, beat);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      cancel?.();
      cancel = null;
      removePresence(deps.root, deps.me.id, deps.role ?? 'chat');
    },
  };
}
