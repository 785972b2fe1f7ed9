// bin/attend, the plugin's `attend` on the Bash tool's PATH (issue #11 §1): it runs the
// plugin's own build found relative to itself (through a symlink too), and without a build it
// says so in one line and exits 5 (environment) instead of recursing into itself.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type TempBus, fakeSession, useTempBus } from '../helpers/bus.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
let bus: TempBus;
useTempBus((b) => (bus = b));

// node itself, and no attend: only the plugin's bin/ provides it.
const PATH = `${dirname(process.execPath)}:/usr/bin:/bin`;

describe('bin/attend', () => {
  it('runs the build beside it, also through a symlink, as the calling session', () => {
    const s = fakeSession(bus, { name: 'binned' });
    try {
      const links = join(bus.dir, 'links');
      mkdirSync(links);
      symlinkSync(join(REPO, 'bin', 'attend'), join(links, 'attend'));
      for (const cmd of [join(REPO, 'bin', 'attend'), join(links, 'attend')]) {
        const r = spawnSync(cmd, ['whoami', '--json'], { env: { ...s.env, PATH }, cwd: s.cwd, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ id: s.sessionId, kind: 'agent', resolved: true });
      }
    } finally {
      s.kill();
    }
  });

  it('without a build, exits 5 with one line saying what to do', () => {
    const plugin = join(bus.dir, 'plugin');
    mkdirSync(plugin);
    cpSync(join(REPO, 'bin'), join(plugin, 'bin'), { recursive: true });
    const r = spawnSync(join(plugin, 'bin', 'attend'), ['whoami'], { env: { ...bus.env, PATH }, encoding: 'utf8' });
    expect(r.status).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^attend: the plugin at .*\/plugin has no build \(.*dist\/tools\/cli\/attend\.cjs is missing\); run `npm install` there$/m);
    expect(r.stderr).not.toMatch(/npm install -g attend\b/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
