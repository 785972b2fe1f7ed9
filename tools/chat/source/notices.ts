// What the source says on the chat's status line about what it could not show: unreadable
// files (counted), directories that cannot be listed or are refused (named, never shown as an
// empty tab: issue #10), and messages the gate holds back (tools/bus/trust/gate.ts: a bad
// signature, refused by policy), counted with the verb that lists them. Held messages never
// reach the screen.

import type { Message, Reporter } from '../../bus/store/index.js';
import { createGate, type Reader } from '../../bus/trust/index.js';

interface Notices {
  reporter: Reporter;
  /** True for a message to show; a held one is counted on the status line instead. */
  admit(m: Message | null): m is Message;
}

const tail = (path: string) => path.split('/').slice(-2).join('/');

export function createNotices(deps: { root: string; reader: Reader; status(text: string): void }): Notices {
  const skipped: string[] = [];
  const held = new Set<string>();
  const gate = createGate(deps.root, deps.reader);
  return {
    reporter: {
      skip(path, reason) {
        const line = `skipped ${path}: ${reason}`;
        if (skipped.includes(line)) return;
        skipped.push(line);
        deps.status(`${skipped.length} unreadable file${skipped.length > 1 ? 's' : ''} skipped (latest: ${tail(path)}: ${reason})`);
      },
      unreadable(path, reason) {
        deps.status(`cannot read ${tail(path)}: ${reason}; its messages are not shown`);
      },
    },
    admit(m): m is Message {
      if (!m) return false;
      if (gate.held(m) === null) return true;
      if (!held.has(m.id)) {
        held.add(m.id);
        // A broken policy holds everything: say why, loudly, rather than only counting.
        deps.status(gate.broken() ?? `${held.size} message${held.size > 1 ? 's' : ''} held back; attend inbox --held`);
      }
      return false;
    },
  };
}
