// The one check every surfacing point makes before a message reaches a model or a screen
// (spec §7, issue 14 "Enforcement in every conduit"): the sensor, the drain and the MCP
// channel push (through tools/bus/ledger.ts takePending), `attend inbox` and chat. A file
// can be written without attend, so the check happens on read, not only at send.
//
// A held message is never shown as from its sender; its owner lists it with
// `attend inbox --held`, with the reason.

import type { Message } from './signals.js';

/** Who is reading: the gate decides per reader (a grant is from a sender to a reader). */
export interface Reader {
  id: string;
  kind: 'agent' | 'human';
}

export interface Gate {
  /** Why `m` must not be surfaced to the reader, or null when it may be. */
  held(m: Message): string | null;
}

/** The gate for one reader. Signatures only, for now; permissions join here (issue 14 §2). */
// eslint-disable-next-line @typescript-eslint/no-unused-vars
export function createGate(_root: string, _reader: Reader): Gate {
  return {
    held(m) {
      if (m.sig === 'bad') return `bad signature: ${m.sigReason ?? 'does not verify'}`;
      return null;
    },
  };
}
