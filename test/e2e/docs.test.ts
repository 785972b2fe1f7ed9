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

  it('the README says when to run each test tier, and each is a script of the package', () => {
    const readme = readFileSync('README.md', 'utf8');
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const tier of ['unit', 'slow', 'e2e']) {
      expect(readme).toMatch(new RegExp(`\\| \`npm run test:${tier}\` \\| [^|]+ \\|`));
      expect(scripts[`test:${tier}`]).toContain(`--project ${tier}`);
    }
  });
});
