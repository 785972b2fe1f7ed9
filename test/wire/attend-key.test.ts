import { describe, expect, it } from 'vitest';
import { attendKey, projectSlug } from '../../tools/wire/names.js';

describe('attend key (spec §2 vectors)', () => {
  it.each([
    ['/srv/my proj', '-srv-my-proj-bte5w6'],
    ['/srv/my-proj', '-srv-my-proj-bm8u6h'],
    ['/home/aaron/proj', '-home-aaron-proj-wjpr18'],
    ['/home/dev/work', '-home-dev-work-47dmtw'],
  ])('%s → %s', (path, key) => {
    expect(attendKey(path)).toBe(key);
  });

  it('slug equals the Claude Code projects folder name', () => {
    expect(projectSlug('/home/dev/work')).toBe('-home-dev-work');
  });

  it('cuts a long slug to 200 and appends the hash', () => {
    const long = `/${'a'.repeat(300)}`;
    const slug = projectSlug(long);
    expect(slug.slice(0, 200)).toBe(`-${'a'.repeat(199)}`);
    expect(slug).toMatch(/^-a{199}-[0-9a-z]+$/);
  });

  it('non-BMP characters become one dash per UTF-16 unit', () => {
    expect(projectSlug('/x😀')).toBe('-x--');
  });
});
