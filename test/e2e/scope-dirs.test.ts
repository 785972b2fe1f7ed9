// Issue #10 items 4 and 6, through the built binary on a real temporary bus:
//   4. a symlinked scope directory (signals/@ops -> elsewhere) is refused for writes,
//      listings, purges and delivery, like a symlinked root;
//   6. a scope directory that cannot be read is named, and the listing is not passed off as
//      "No messages." with exit 0.

import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBusSource } from '../../tools/chat/bus-source.js';
import { BIN, ME, type TempBus, runBin, useTempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => {
  bus = b;
});

const asHuman = (args: string[], input?: string) => runBin(args, { env: bus.env, cwd: bus.home, ...(input !== undefined ? { input } : {}) });
const line = (body: string) => `external:mallory@pts-9|p|/p|from_kind:human|from_id:mallory|to:#ops|${body}\n`;

/** signals/@ops becomes a link to a directory outside the bus holding one message. */
function linkOps(): string {
  const c = asHuman(['channels', 'create', 'ops']);
  expect(c.exitCode, c.stderr).toBe(0);
  expect(asHuman(['join', 'ops']).exitCode).toBe(0);
  const elsewhere = join(bus.dir, 'elsewhere');
  mkdirSync(elsewhere, { mode: 0o700 });
  writeFileSync(join(elsewhere, '0zzzzzzzz000-aaaa0001.signal'), line('from outside the bus'));
  const ops = join(bus.root, 'signals', '@ops');
  rmSync(ops, { recursive: true, force: true });
  mkdirSync(join(bus.root, 'signals'), { recursive: true, mode: 0o700 });
  symlinkSync(elsewhere, ops);
  return elsewhere;
}

describe('symlinked scope directories are refused', () => {
  it('send: exit 3, nothing written through the link', () => {
    const elsewhere = linkOps();
    const r = asHuman(['send', '--channel', 'ops', 'hello']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/^attend: refusing to use .*\/signals\/@ops: a symbolic link \(refused, like a symlinked bus root\); remove it/);
    expect(readdirSync(elsewhere)).toEqual(['0zzzzzzzz000-aaaa0001.signal']);
  });

  it('inbox (list and by id) and the drain: what the link leads to is never shown', () => {
    linkOps();
    const list = asHuman(['inbox']);
    expect(list.stdout).not.toContain('from outside the bus');
    expect(list.stderr).toMatch(/cannot read .*\/signals\/@ops: a symbolic link/);
    expect(list.exitCode).toBe(3);
    const one = asHuman(['inbox', '0zzzzzzzz000-aaaa0001']);
    expect(one.stdout).not.toContain('from outside the bus');
    expect(one.exitCode).toBe(1);
    const s = session({ name: 'api' });
    expect(runBin(['join', 'ops'], { env: s.env, cwd: s.cwd }).exitCode).toBe(0);
    const drain = runBin(['inbox', '--drain', '--format', 'plain'], { env: s.env, cwd: s.cwd });
    expect(drain.stdout).not.toContain('from outside the bus');
    expect(drain.stderr).toMatch(/cannot read .*@ops: a symbolic link/);
  });

  it('purge: exit 3, the files behind the link are untouched', () => {
    const elsewhere = linkOps();
    const before = readFileSync(join(elsewhere, '0zzzzzzzz000-aaaa0001.signal'), 'utf8');
    const r = asHuman(['purge', 'ops']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/refusing to use .*@ops: a symbolic link/);
    expect(readFileSync(join(elsewhere, '0zzzzzzzz000-aaaa0001.signal'), 'utf8')).toBe(before);
  });

  it('the chat names a refused directory on its status line instead of showing it empty', async () => {
    linkOps();
    const src = createBusSource({ root: bus.root, rescanMs: 50, reader: { id: ME, kind: 'human', user: ME } });
    const statuses: string[] = [];
    const { messages } = src.loadInitial(50);
    expect(messages.map((m) => m.body)).not.toContain('from outside the bus');
    src.start({ arrived: () => {}, status: (t) => void (t && statuses.push(t)), channels: () => {} });
    try {
      await waitFor(() => statuses.some((t) => t.includes('cannot read signals/@ops: a symbolic link')), { what: 'the status line' });
    } finally {
      src.stop();
    }
  });

  it('a symlinked signals/ is refused the same way', () => {
    expect(asHuman(['send', 'first']).exitCode).toBe(0);
    const real = join(bus.dir, 'signals-elsewhere');
    renameSync(join(bus.root, 'signals'), real);
    symlinkSync(real, join(bus.root, 'signals'));
    const r = asHuman(['send', 'second']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/signals is a symbolic link/);
    expect(readdirSync(join(real, '_broadcast')).filter((n) => n.endsWith('.signal'))).toHaveLength(1);
  });
});

describe('an unreadable scope directory is named, never "No messages."', () => {
  it('a scope path that is not a directory', () => {
    expect(asHuman(['send', 'kept']).exitCode).toBe(0);
    // #open replaced by a file: nothing there can be listed.
    const open = join(bus.root, 'signals', '_broadcast');
    rmSync(open, { recursive: true });
    writeFileSync(open, 'not a directory', { mode: 0o600 });
    const r = asHuman(['inbox']);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe('No messages could be read: 1 directory could not be read (see above).\n');
    expect(r.stderr).toMatch(/^attend: cannot read .*\/signals\/_broadcast: not a directory; its messages are not shown\n$/);
    const j = asHuman(['inbox', '--json']);
    expect(j.exitCode).toBe(3);
    expect((JSON.parse(j.stdout) as { unreadable: { path: string; reason: string }[] }).unreadable).toEqual([{ path: open, reason: 'not a directory' }]);
  });

  // Permissions bind only a process that is not root; as root the CLI runs as `nobody`.
  const root = process.getuid?.() === 0;
  const nobody = root ? Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim()) : undefined;
  // `nobody` must be able to run attend from this checkout: a clone inside a 0700 directory
  // (mktemp -d) is out of its reach, and as root the test would prove nothing.
  const nobodyCanRun = nobody === undefined || spawnSync(process.execPath, ['-e', `require('node:fs').accessSync(${JSON.stringify(BIN)})`], { uid: nobody, gid: nobody }).status === 0;
  it.skipIf(!nobodyCanRun)('a directory without read permission: named on stderr, the rest still listed, exit 3 (skipped when `nobody` cannot reach this checkout)', () => {
    const env = { ...bus.env };
    if (nobody !== undefined) spawnSync('chown', ['-R', `${nobody}`, bus.dir]);
    chmodSync(bus.dir, 0o755);
    const run = (args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], { env, cwd: bus.home, encoding: 'utf8', ...(nobody !== undefined ? { uid: nobody, gid: nobody } : {}) });
      return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    };
    expect(run(['send', 'on open']).exitCode).toBe(0);
    expect(run(['channels', 'create', 'ops']).exitCode).toBe(0);
    expect(run(['join', 'ops']).exitCode).toBe(0);
    expect(run(['send', '--channel', 'ops', 'in ops']).exitCode).toBe(0);
    const ops = join(bus.root, 'signals', '@ops');
    chmodSync(ops, 0o000);
    try {
      const r = run(['inbox']);
      expect(r.exitCode).toBe(3);
      expect(r.stdout).toContain('on open');
      expect(r.stdout).not.toContain('in ops');
      expect(r.stderr).toContain(`attend: cannot read ${ops}: permission denied (EACCES); its messages are not shown`);
      expect(r.stderr).toContain('attend: this listing is incomplete: 1 directory could not be read (see above)');
    } finally {
      chmodSync(ops, 0o700);
      if (nobody !== undefined) chownSync(bus.dir, 0, 0);
    }
  });
});
