// One sensor wake against a real temporary bus (issue #10 §4): past the digest threshold a
// message addressed to the session is still shown in full, and `reply` threads to it.

import { describe, expect, it } from 'vitest';
import { readSurfaced } from '../../tools/bus/delivery/surfaced.js';
import { scanOnce } from '../../tools/sensor/scan.js';
import { silentReporter } from '../../tools/bus/store/messages.js';
import { nameLookup } from '../../tools/wire/display.js';
import { attendKey } from '../../tools/wire/names.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { agent, ids, put } from '../helpers/fixtures.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

function wake(who: ReturnType<typeof agent>) {
  const lines: string[] = [];
  const r = scanOnce({ root: bus.root, now: Date.now, reporter: silentReporter, names: (me) => nameLookup([], me), write: (l) => void lines.push(l), warn: () => {} }, who);
  return { r, lines };
}

describe('a sensor wake past the digest threshold', () => {
  it('digests #open traffic but shows a direct message in full, and reply threads to it', () => {
    const who = agent('00000000-0000-4000-8000-0000000000aa', `${bus.dir}/work/me`);
    wake(who); // start the ledger (cold start on an empty bus)
    const mk = ids();
    const open = Array.from({ length: 12 }, (_, i) => put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: `chatter ${i}` }));
    const direct = put(bus.root, mk, { scope: { kind: 'tray', key: attendKey(who.origin) }, to: who.id, body: 'for you alone' });
    const { r, lines } = wake(who);
    expect(lines.some((l) => l.startsWith('[attend digest count=12 to_you=0 open=12'))).toBe(true);
    expect(lines.some((l) => l.includes(`id=${direct}]`))).toBe(true);
    expect(lines.some((l) => l.includes('for you alone'))).toBe(true);
    expect(new Set(r.delivered)).toEqual(new Set([...open, direct]));
    expect(readSurfaced(bus.root, who.id)?.id).toBe(direct);
    // Nothing is left: the next wake is empty.
    expect(wake(who).lines).toEqual([]);
  });

  it('more direct messages than one wake shows arrive over several wakes, none folded away', () => {
    const who = agent('00000000-0000-4000-8000-0000000000ab', `${bus.dir}/work/me2`);
    wake(who);
    const mk = ids();
    const direct = Array.from({ length: 11 }, (_, i) => put(bus.root, mk, { scope: { kind: 'tray', key: attendKey(who.origin) }, to: who.id, body: `task ${i}` }));
    const first = wake(who);
    expect(first.r.later).toBe(true);
    expect(first.lines.some((l) => l.startsWith('[attend digest'))).toBe(false);
    const second = wake(who);
    expect([...first.r.delivered, ...second.r.delivered]).toEqual(direct);
    expect(second.r.later).toBe(false);
  });
});

describe('the newest shown message, which a bare reply threads to', () => {
  it('is the newer of what a conduit delivered (kept in the ledger) and what a listing showed, and follows /clear', async () => {
    const { noteSurfaced } = await import('../../tools/bus/delivery/surfaced.js');
    const { moveLedger } = await import('../../tools/bus/delivery/ledger.js');
    const who = agent('00000000-0000-4000-8000-0000000000ac', `${bus.dir}/work/me3`);
    wake(who);
    const mk = ids();
    const older = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'older' });
    const delivered = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'delivered' });
    expect(wake(who).r.delivered).toEqual([older, delivered]);
    expect(readSurfaced(bus.root, who.id)?.id).toBe(delivered);
    // A listing that shows something older does not move the mark back...
    noteSurfaced(bus.root, who.id, { id: older, time: Date.now() - 60_000 });
    expect(readSurfaced(bus.root, who.id)?.id).toBe(delivered);
    // ...one that shows something newer does.
    const listed = put(bus.root, mk, { scope: { kind: 'open' }, to: '*', body: 'listed' });
    noteSurfaced(bus.root, who.id, { id: listed, time: Date.now() + 1 });
    expect(readSurfaced(bus.root, who.id)?.id).toBe(listed);
    // The delivered mark moves with the ledger when /clear gives the session a new id.
    const next = '00000000-0000-4000-8000-0000000000ad';
    expect(moveLedger(bus.root, who.id, next)).toBe(true);
    expect(readSurfaced(bus.root, next)?.id).toBe(delivered);
  });
});
