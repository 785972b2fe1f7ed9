// Issue 21 §6, record first, then show: a sensor wake is recorded before its lines are
// written, so a stdout that closes part-way must give back what it did not show. In-process
// over a temporary bus. (A full disk, where the record itself fails and nothing is shown:
// test/e2e/ledger-full-disk.test.ts and test/e2e/full-disk.test.ts.)

import { describe, expect, it } from 'vitest';
import { silentReporter } from '../../tools/bus/store/messages.js';
import { scanOnce } from '../../tools/sensor/scan.js';
import { nameLookup } from '../../tools/wire/display.js';
import { attendKey } from '../../tools/wire/names.js';
import { agent, headerIds, ids, put } from '../helpers/fixtures.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function wake(who: ReturnType<typeof agent>, write?: (line: string) => void) {
  const lines: string[] = [];
  const r = scanOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (me) => nameLookup([], me), write: write ?? ((l) => void lines.push(l)), warn: () => {} }, who);
  return { r, lines, ids: headerIds(lines.join('\n')) };
}

describe('record first, then show: a stdout that closes part-way', () => {
  it('what was not shown is given back and shown by the next wake; what was shown is not shown again', () => {
    const who = agent('00000000-0000-4000-8000-0000000000d3', `${bus.dir}/work/me3`);
    wake(who);
    const mk = ids();
    const tray = { kind: 'tray', key: attendKey(who.origin) } as const;
    const sent = Array.from({ length: 4 }, (_, i) => put(bus.root, mk, { scope: tray, to: who.id, body: `task ${i}` }));
    const lines: string[] = [];
    let headers = 0;
    const r = wake(who, (l) => {
      // The pipe closes as the third message's header is written.
      if (l.startsWith('[attend message') && ++headers === 3) throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
      lines.push(l);
    });
    expect(r.r.closed).toBe(true);
    const shown = headerIds(lines.join('\n'));
    expect(shown).toEqual(sent.slice(0, 2));
    expect(r.r.delivered).toEqual(sent.slice(0, 2));
    expect(wake(who).ids).toEqual(sent.slice(2));
    expect(wake(who).ids).toEqual([]);
  });
});
