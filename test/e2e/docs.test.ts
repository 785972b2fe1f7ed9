// The docs are part of the change: the CLI reference is generated from --help and must match.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('docs stay in step with the code', () => {
  it('docs/reference.md matches attend --help (node scripts/gen-reference.mjs)', () => {
    const r = spawnSync(process.execPath, ['scripts/gen-reference.mjs', '--check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the README names the two commands and the test command', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toContain('npm install');
    expect(readme).toContain('npm run demo');
    expect(readme).toContain('npm test');
  });
});
