// A message written on this machine as attend's writers write one, for tests in any tier (no
// hub, no child process).
import { writeSignals } from '../../tools/bus/store/index.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { createIdFactory } from '../../tools/wire/ids.js';

const newId = createIdFactory({ now: Date.now, pid: process.pid, random: Math.random });

/** A message from a local person, written as attend writes one (index line included); its id. */
export function writeLocal(root: string, body: string, scope: Scope = { kind: 'open' }, from = 'ann'): string {
  const id = newId();
  writeSignals(root, [scope], id, { from: `external:${from}@pts/1`, project: 'work', cwd: '/work', fromKind: 'human', fromId: from, to: '*', body });
  return id;
}
