// Message ids: the file stem. Unique across processes writing in the same nanosecond and
// sorted by creation time (docs/architecture.md, "The bus on disk"). Pure: the clock and randomness are injected.
//
// Layout (all lowercase base36, fixed width, so string order is time order):
//   9 chars milliseconds since the epoch · 3 chars per-process sequence · `-` ·
//   4 chars pid · 4 chars random
// The sequence restarts each millisecond; a process that issues more than 46,656 ids in
// one millisecond borrows the next millisecond, so its own ids always increase.

interface IdSource {
  now(): number;
  pid: number;
  random(): number;
}

const SEQ_SPACE = 36 ** 3;

export function createIdFactory(src: IdSource): () => string {
  let lastMs = 0;
  let seq = 0;
  const pidPart = (src.pid % 36 ** 4).toString(36).padStart(4, '0');
  return () => {
    const now = Math.floor(src.now());
    if (now > lastMs) {
      lastMs = now;
      seq = 0;
    } else {
      seq += 1;
      if (seq >= SEQ_SPACE) {
        lastMs += 1;
        seq = 0;
      }
    }
    const rand = Math.floor(src.random() * 36 ** 4).toString(36).padStart(4, '0');
    return `${lastMs.toString(36).padStart(9, '0')}${seq.toString(36).padStart(3, '0')}-${pidPart}${rand}`;
  };
}

const OWN_ID = /^([0-9a-z]{9})[0-9a-z]{3}-[0-9a-z]{8}$/;

/** Creation time in ms of an id this module made, or null for a foreign (legacy) id. */
export function idTime(id: string): number | null {
  const m = OWN_ID.exec(id);
  return m?.[1] ? parseInt(m[1], 36) : null;
}

const MESSAGE_ID_CLASS = /^[A-Za-z0-9_-]+$/;
export function isMessageId(id: string): boolean {
  return id.length > 0 && id.length <= 128 && MESSAGE_ID_CLASS.test(id);
}

/** The smallest id string made at `ms`: every id made earlier sorts below it. */
export function idFloor(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(36).padStart(9, '0');
}
