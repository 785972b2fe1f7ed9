// The package as users get it (the first hour, item 5): `npm pack`, then `npm install -g` of
// the tarball into a temporary prefix, from npm's cache where it can (`npm ci` caches the
// tarballs, not the registry metadata the install resolves with, so the rest comes from the registry), with
// not one `npm warn` line; the installed `attend` runs, and what it installs into Claude Code
// points at the installed copy by absolute path.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTree } from '../helpers/bus.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

let dir: string;
let prefix: string;
let packOut: { status: number | null; stdout: string; stderr: string };
let installOut: { status: number | null; stdout: string; stderr: string };

function npm(args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_loglevel: 'warn', ...env },
    timeout: 170_000,
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'attend-package-'));
  prefix = join(dir, 'prefix');
  mkdirSync(prefix);
  // The build is already there (test:e2e builds first); its prepack would rebuild dist/ under
  // the other e2e tests' feet, so it packs the dist/ there (ATTEND_PACK_PREBUILT).
  packOut = npm(['pack', '--pack-destination', dir], REPO, { ATTEND_PACK_PREBUILT: '1' });
  installOut = npm(['install', '-g', '--prefer-offline', `./attend-${VERSION}.tgz`], dir, { npm_config_prefix: prefix });
}, 180_000);
afterAll(() => removeTree(dir));

const warnings = (text: string) => text.split('\n').filter((l) => /^npm warn/i.test(l));

describe('the tarball', () => {
  it('packs and installs with no npm warning, and holds the LICENSE and the build', () => {
    expect(packOut.status, packOut.stderr).toBe(0);
    expect(warnings(packOut.stdout + packOut.stderr)).toEqual([]);
    expect(installOut.status, installOut.stderr).toBe(0);
    expect(warnings(installOut.stdout + installOut.stderr)).toEqual([]);
    const installed = join(prefix, 'lib', 'node_modules', 'attend');
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(existsSync(join(installed, 'dist', 'tools', 'cli', 'attend.cjs'))).toBe(true);
    // No install-time script: a tarball has no sources to build, and npm warns about any (the
    // checkout's prepare is left out of the packed package.json, scripts/pack-manifest.mjs).
    const scripts = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    expect(Object.keys(scripts).filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).toEqual([]);
  });

  it('installs an attend that runs, and whose attend install points at the installed copy', () => {
    const bin = join(prefix, 'bin', 'attend');
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, ATTEND_HOME: join(home, 'bus'), PATH: `${join(prefix, 'bin')}:${process.env.PATH}` };
    const version = spawnSync(bin, ['--version'], { env, encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    const install = spawnSync(bin, ['install'], { env, cwd: home, encoding: 'utf8' });
    expect(install.status, install.stderr).toBe(0);
    expect(install.stderr).toBe('');
    const cli = join(prefix, 'lib', 'node_modules', 'attend', 'dist', 'tools', 'cli', 'attend.cjs');
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    expect(settings.hooks.Stop[0].hooks[0].command).toBe(`${process.execPath} ${cli} hook stop`);
    // Off PATH, the hint names the installed copy's bin directory, not a registry package.
    const doctor = spawnSync(process.execPath, [cli, 'doctor', '--json'], { env: { ...env, PATH: '/usr/bin:/bin' }, cwd: home, encoding: 'utf8' });
    const onPath = (JSON.parse(doctor.stdout) as { checks: { name: string; fix: string | null }[] }).checks.find((c) => c.name === 'attend on PATH');
    expect(onPath?.fix).toBe(`attend is installed in ${join(prefix, 'lib', 'node_modules', 'attend')}; put its bin directory on PATH: export PATH="${join(prefix, 'bin')}:$PATH" (in ~/.profile, which login shells read)`);
  });
});
