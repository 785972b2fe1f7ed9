// The naming rule, pure (tools/wire/names.ts): what a party is called from what it is, made
// unique among the live once, and kept.

import { describe, expect, it } from 'vitest';
import { giveNames, harnessOf, nameBase, nameToken, uniqueName } from '../../tools/wire/names.js';

describe('what a name is made from', () => {
  it.each([
    ['codex-1a2b.3c4d', 'codex'],
    ['gemini-zz.9', 'gemini'],
    ['opencode-5x', 'opencode'],
    ['mybot.w1@dev', 'mybot'],
    ['my-bot@dev', 'my-bot'],
    ['ci-runner7', 'ci'],
    ['00000000-0000-4000-8000-000000000001', 'claude'],
  ])('the harness of %s is %s', (id, harness) => {
    expect(harnessOf(id)).toBe(harness);
  });

  it('is the own name when there is one, else <harness>-<project>, the project made a name', () => {
    expect(nameBase({ id: 'codex-1.2', origin: '/srv/My Web App/' })).toBe('codex-my-web-app');
    expect(nameBase({ id: 'codex-1.2', origin: '/' })).toBe('codex-root');
    expect(nameBase({ id: '00000000-0000-4000-8000-000000000001', origin: '/srv/api', own: 'work-6d' })).toBe('work-6d');
    expect(nameToken('--Ünïcode  stuff--')).toBe('n-code-stuff');
  });

  it('takes the first free suffix', () => {
    const taken = new Set(['api', 'api-2']);
    expect(uniqueName('api', (k) => taken.has(k))).toBe('api-3');
    expect(uniqueName('web', (k) => taken.has(k))).toBe('web');
  });
});

describe('giving names', () => {
  const none = () => [];

  it('keeps a name while its base is the same, whoever else arrives', () => {
    const had = { name: 'codex-api', base: 'codex-api', since: 1, aliases: [] };
    const r = giveNames([{ id: 'b', base: 'codex-api' }, { id: 'a', base: 'codex-api', had }], none, 5);
    expect(r.get('a')).toEqual({ given: had, changed: false });
    expect(r.get('b')?.given).toMatchObject({ name: 'codex-api-2', since: 5, aliases: [] });
  });

  it('a party that came back to find its name given to another is named anew; the earlier name stays an alias', () => {
    const back = { name: 'x', base: 'x', since: 1, aliases: [] };
    const stayed = { name: 'x', base: 'x', since: 3, aliases: [] };
    const r = giveNames([{ id: 'back', base: 'x', had: back }, { id: 'stayed', base: 'x', had: stayed }], none, 9);
    expect(r.get('stayed')?.given.name).toBe('x');
    expect(r.get('back')?.given).toMatchObject({ name: 'x-2', aliases: ['x'] });
  });

  it('a new own name renames it, and the old one becomes an alias; names held by others are skipped', () => {
    const had = { name: 'parser', base: 'parser', since: 1, aliases: ['Abe-alpha'] };
    const r = giveNames([{ id: 'a', base: 'lexer', had }], (k) => (k === 'lexer' ? ['someone'] : []), 7);
    expect(r.get('a')?.given).toEqual({ name: 'lexer-2', base: 'lexer', since: 7, aliases: ['Abe-alpha', 'parser'] });
  });

  it('a name from before names were given is kept as an alias', () => {
    const r = giveNames([{ id: 'a', base: 'codex-api', legacy: 'Abe-alpha' }], none, 1);
    expect(r.get('a')?.given.aliases).toEqual(['Abe-alpha']);
  });
});
