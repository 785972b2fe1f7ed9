// The remote identity rule (issue 13): session ids are global, every other id is its
// machine's, read elsewhere as `host:id` and shown `id@host`.
import { describe, expect, it } from 'vitest';
import { displayId, isGlobalId, localizeId, localizeTo, qualifyId } from '../../tools/wire/hosts.js';
import { WIDE_CLASS } from '../../tools/wire/envelope.js';

const SID = '3f1c9a2e-7b4d-4e8a-9c61-0d2f5b7a1e33';

describe('parties across machines', () => {
  it('reads an id written on another machine as that machine names it', () => {
    expect(isGlobalId(SID)).toBe(true);
    expect(isGlobalId('aaron')).toBe(false);
    const cases: [id: string, from: string, local: string | null, reads: string][] = [
      ['aaron', 'box', 'laptop', 'box:aaron'],
      [SID, 'box', 'laptop', SID],
      ['laptop:ann', 'box', 'laptop', 'ann'],
      ['ci:bob', 'box', 'laptop', 'ci:bob'],
      ['codex@aaron', 'box', 'laptop', 'box:codex@aaron'],
      ['laptop:ann', 'box', null, 'laptop:ann'],
    ];
    for (const [id, from, local, reads] of cases) expect(localizeId(id, from, local), `${id} from ${from}`).toBe(reads);
    expect(localizeTo('aaron,laptop:ann,' + SID, 'box', 'laptop')).toBe(`box:aaron,ann,${SID}`);
    for (const to of ['*', '#ops', 'tray']) expect(localizeTo(to, 'box', 'laptop')).toBe(to);
  });

  it('a qualified id stays in the envelope value class and never equals a local one', () => {
    expect(qualifyId('aaron', 'box')).toBe('box:aaron');
    expect(qualifyId('box:aaron', 'ci')).toBe('box:aaron');
    expect(qualifyId(SID, 'box')).toBe(SID);
    expect(WIDE_CLASS.test('box:codex@aaron')).toBe(true);
    expect(displayId('box:aaron')).toBe('aaron@box');
    expect(displayId('aaron')).toBe('aaron');
  });
});
