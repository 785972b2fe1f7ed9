// Who a message is for (tools/wire/visibility.ts, issue 19): the one module that compares a
// message's addressees with a reader. A table of the cases the six copies it replaced handled
// (a sibling's tray mail, the sender's own, `*`, channels, legacy tray lines, humans, parties
// of another machine), then properties: an entry of the listing cache and its message always
// get the same answer, the sender always sees its own, a broadcast is everyone's.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Scope, addressees } from '../../tools/wire/envelope.js';
import { localizeId, localizeTo } from '../../tools/wire/hosts.js';
import { type Addressed, audienceOf, isAddressedTo, isDirectMail, isFromOrTo, isNamed, maySee } from '../../tools/wire/visibility.js';

const TRAY: Scope = { kind: 'tray', key: '-srv-app-abc123' };
const OPEN: Scope = { kind: 'open' };
const OPS: Scope = { kind: 'channel', name: 'ops' };
const SID = '3f1c9a2e-7b4d-4e8a-9c61-0d2f5b7a1e33';

/** What the listing cache keeps of a message it could read (tools/bus/store/listing.ts readEntry). */
function entryOf(scope: Scope, m: { fromId: string; to: string }): Addressed {
  if (scope.kind === 'tray') return { fromId: m.fromId, to: m.to };
  if (scope.kind === 'open' && addressees(m.to).length > 0) return { to: m.to };
  return {};
}

type Row = [what: string, scope: Scope, fromId: string, to: string, reader: string, maySee: boolean, addressed: boolean, fromOrTo: boolean, direct: boolean];

const ROWS: Row[] = [
  ['tray mail to me', TRAY, 'hana', 'me', 'me', true, true, true, true],
  ['tray mail to a sibling at the same origin', TRAY, 'hana', 'sib', 'me', false, false, false, false],
  ['tray mail I sent to a sibling: the sender sees its own', TRAY, 'me', 'sib', 'me', true, false, true, true],
  ['tray mail to me and a sibling', TRAY, 'hana', 'sib,me', 'me', true, true, true, true],
  ['a legacy tray line ("this tray") is the tray’s, so mine', TRAY, 'hana', 'tray', 'me', true, true, true, false],
  ['`*` in a tray names nobody: everyone’s', TRAY, 'hana', '*', 'me', true, false, false, false],
  ['`#name` in a tray names nobody: everyone’s', TRAY, 'hana', '#ops', 'me', true, false, false, false],
  ['#open is everyone’s', OPEN, 'hana', '*', 'me', true, false, false, false],
  ['an #open reply addressed to someone else is still #open', OPEN, 'hana', 'sib', 'me', true, false, false, false],
  ['an #open reply addressed to me', OPEN, 'hana', 'me', 'me', true, true, true, true],
  ['channel traffic', OPS, 'hana', '#ops', 'me', true, false, false, false],
  ['a channel reply addressed to another member', OPS, 'hana', 'sib', 'me', true, false, false, false],
  ['a channel reply addressed to me', OPS, 'hana', 'me', 'me', true, true, true, true],
  ['a human reads like an agent: tray mail to the person', TRAY, SID, 'aaron', 'aaron', true, true, true, true],
  ['a human reads like an agent: a session’s mail at the person’s origin', TRAY, SID, 'hana', 'aaron', false, false, false, false],
  ['a party of another machine, as this one reads it (box:ann is not ann)', TRAY, 'box:ann', 'me', 'ann', false, false, false, false],
  ['mail to this machine’s ann from another machine, localized', TRAY, 'box:aaron', 'ann', 'ann', true, true, true, true],
  ['a prefix of an id is not the id', TRAY, 'hana', 'mee,m', 'me', false, false, false, false],
];

describe('visibility: the cases', () => {
  it.each(ROWS)('%s', (_what, scope, fromId, to, reader, see, addressed, fromOrTo, direct) => {
    const m = { fromId, to };
    expect(maySee(scope, m, reader), 'maySee').toBe(see);
    expect(maySee(scope, entryOf(scope, m), reader), 'maySee of the entry').toBe(see);
    expect(isAddressedTo(m, reader), 'isAddressedTo').toBe(addressed);
    expect(isFromOrTo(m, reader), 'isFromOrTo').toBe(fromOrTo);
    expect(isDirectMail(m, reader), 'isDirectMail').toBe(direct);
  });

  it('an entry the cache could not read is visible: reading its message decides', () => {
    for (const scope of [TRAY, OPEN, OPS]) expect(maySee(scope, {}, 'me')).toBe(true);
  });

  it('the audience of a tray message is its sender and addressees, once each', () => {
    expect(audienceOf(TRAY, { fromId: 'hana', to: 'sib,hana,sib' })).toEqual(['hana', 'sib']);
    expect(audienceOf(TRAY, { fromId: 'hana', to: 'tray' })).toBe('everyone');
    expect(audienceOf(OPEN, { fromId: 'hana', to: 'sib' })).toBe('everyone');
  });

  it('a line written on box is read on laptop with box’s parties qualified and laptop’s bare', () => {
    // box's `aaron` writes to laptop's `ann` and to box's own `bob`; read on laptop.
    const read = (fromId: string, to: string) => ({ fromId: localizeId(fromId, 'box', 'laptop'), to: localizeTo(to, 'box', 'laptop') });
    const m = read('aaron', `laptop:ann,bob,${SID}`);
    expect(m).toEqual({ fromId: 'box:aaron', to: `ann,box:bob,${SID}` });
    expect(maySee(TRAY, m, 'ann')).toBe(true);
    expect(maySee(TRAY, m, SID)).toBe(true);
    // Laptop's own bob and aaron are not box's.
    expect(maySee(TRAY, m, 'bob')).toBe(false);
    expect(maySee(TRAY, m, 'aaron')).toBe(false);
  });
});

const ID = fc.constantFrom('me', 'sib', 'hana', 'aaron', SID, 'box:ann', 'ann');
const TO = fc.oneof(fc.constantFrom('*', 'tray', '#ops'), fc.array(ID, { minLength: 1, maxLength: 4 }).map((ids) => ids.join(',')));
const SCOPE = fc.constantFrom(TRAY, OPEN, OPS);
const MESSAGE = fc.record({ fromId: ID, to: TO });

describe('visibility: properties', () => {
  it('an entry of the listing cache and its message always get the same answer', () => {
    fc.assert(
      fc.property(SCOPE, MESSAGE, ID, (scope, m, reader) => {
        expect(maySee(scope, entryOf(scope, m), reader)).toBe(maySee(scope, m, reader));
      }),
    );
  });

  it('the sender always sees its own', () => {
    fc.assert(fc.property(SCOPE, TO, ID, (scope, to, reader) => maySee(scope, { fromId: reader, to }, reader) && isFromOrTo({ fromId: reader, to }, reader)));
  });

  it('a broadcast, a channel name or a legacy tray line is for everyone in the scope', () => {
    fc.assert(
      fc.property(SCOPE, fc.constantFrom('*', '#ops', 'tray'), ID, ID, (scope, to, fromId, reader) => {
        expect(maySee(scope, { fromId, to }, reader)).toBe(true);
        expect(audienceOf(scope, { fromId, to })).toBe('everyone');
        expect(isNamed({ fromId, to }, reader)).toBe(false);
        expect(isDirectMail({ fromId, to }, reader)).toBe(false);
      }),
    );
  });

  it('outside a tray everything is everyone’s: the receive set decides', () => {
    fc.assert(fc.property(fc.constantFrom(OPEN, OPS), MESSAGE, ID, (scope, m, reader) => maySee(scope, m, reader)));
  });

  it('who may see is who the audience counts (the listing cache counts by audience)', () => {
    fc.assert(
      fc.property(SCOPE, MESSAGE, ID, (scope, m, reader) => {
        const audience = audienceOf(scope, m);
        expect(maySee(scope, m, reader)).toBe(audience === 'everyone' || audience.includes(reader));
      }),
    );
  });

  it('what is addressed to the reader it may see; named means one of the ids, whatever their order', () => {
    fc.assert(
      fc.property(fc.array(ID, { minLength: 1, maxLength: 4 }), ID, ID, (ids, fromId, reader) => {
        const m = { fromId, to: ids.join(',') };
        const shuffled = { fromId, to: [...ids].reverse().join(',') };
        expect(isNamed(m, reader)).toBe(ids.includes(reader));
        expect(isNamed(shuffled, reader)).toBe(isNamed(m, reader));
        if (isAddressedTo(m, reader)) expect(maySee(TRAY, m, reader)).toBe(true);
        expect(isFromOrTo(m, reader)).toBe(fromId === reader || ids.includes(reader));
        expect(isDirectMail(m, reader)).toBe(isFromOrTo(m, reader));
      }),
    );
  });

  it('across machines: a local reader is named by a line from box exactly when box wrote it qualified with this host', () => {
    const RAW = fc.constantFrom<string>('ann', 'laptop:ann', 'bob', 'laptop:bob', 'ci:ann', SID);
    fc.assert(
      fc.property(fc.array(RAW, { minLength: 1, maxLength: 4 }), fc.constantFrom('ann', 'bob', SID), (raw, reader) => {
        const to = localizeTo(raw.join(','), 'box', 'laptop');
        const qualified = reader === SID ? SID : `laptop:${reader}`;
        expect(isNamed({ to }, reader)).toBe(raw.includes(qualified));
      }),
    );
  });
});
