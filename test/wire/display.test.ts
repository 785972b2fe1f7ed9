// What a party and a scope are called (tools/wire/display.ts): the one rule every front end
// shows names by (issue 19, "each rule once").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type KnownNames, addresseeLabel, nameLookup, partyLabel, partyName, scopeName, shortId } from '../../tools/wire/display.js';

const SID = '1a2b3c4d-0000-4000-8000-000000000001';
const live = new Map([['sid-tam', 'Tam-beta']]);
const known: KnownNames = Object.assign(new Map([[SID, 'api'], ['sid-tam', 'Tam-old'], ['box:aaron', 'aaron@box']]), { elsewhere: new Set(['box:aaron']) });

describe('partyName: live name, else last known marked gone, else a short id', () => {
  it.each([
    ['live beats known', 'sid-tam', 'Tam-beta'],
    ['a session that ended (docs/architecture.md, "Addressing")', SID, 'api (gone)'],
    ['live on another machine is not gone', 'box:aaron', 'aaron@box'],
    ['a long session id nobody named', 'ffffffff-0000-4000-8000-000000000002', 'ffffffff…'],
    ['a qualified id nobody named', 'laptop:ann', 'ann@laptop'],
    ['a username as it is', 'aaron', 'aaron'],
  ])('%s', (_what, id, shown) => {
    expect(partyName(id, live, known)).toBe(shown);
    expect(nameLookup(live, 'me', known).name(id)).toBe(shown);
  });

  it('without known names an ended session is its short id', () => {
    expect(partyName(SID, live)).toBe(shortId(SID));
  });

  it('nameLookup takes the peers themselves as well as a map', () => {
    expect(nameLookup([{ id: 'sid-tam', name: 'Tam-beta' }], 'me').name('sid-tam')).toBe('Tam-beta');
  });
});

describe('partyLabel and addresseeLabel: the reader is `you`', () => {
  const names = nameLookup(live, 'me', known);

  it('names the reader `you` and everyone else by partyName', () => {
    expect(partyLabel('me', names)).toBe('you');
    expect(partyLabel(SID, names)).toBe('api (gone)');
  });

  it.each([
    ['*', '#open'],
    ['#ops', '#ops'],
    ['tray', 'this tray'],
    ['me', 'you'],
    ['sid-tam', 'Tam-beta'],
    // Two copies disagreed here (the Monitor line said only `you`, the CLI and chat listed
    // everyone): a reader addressed beside others is told who else was.
    ['me,sid-tam', 'you, Tam-beta'],
    [`sid-tam,${SID}`, 'Tam-beta, api (gone)'],
  ])('to %s reads %s', (to, shown) => {
    expect(addresseeLabel({ to }, names)).toBe(shown);
  });

  it('property: one part per addressee, `you` exactly where the reader is', () => {
    // `tray` alone is the legacy tray line, and a party called `you` would read as the reader.
    const id = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/).filter((s) => s !== 'tray' && s !== 'you');
    fc.assert(
      fc.property(fc.uniqueArray(id, { minLength: 1, maxLength: 6 }), (ids) => {
        const parts = addresseeLabel({ to: ids.join(',') }, nameLookup(new Map(), ids[0]!)).split(', ');
        expect(parts).toHaveLength(ids.length);
        expect(parts.map((p, i) => (p === 'you') === (i === 0))).not.toContain(false);
      }),
    );
  });
});

describe('scopeName', () => {
  it.each([
    [{ kind: 'open' } as const, '#open'],
    [{ kind: 'channel', name: 'ops' } as const, '#ops'],
    [{ kind: 'tray', key: 'srv-api-1x' } as const, 'tray'],
  ])('%j is %s', (scope, shown) => {
    expect(scopeName(scope)).toBe(shown);
  });
});
