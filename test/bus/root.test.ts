import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../tools/bus/store/atomic.js';
import { AttendError, EXIT } from '../../tools/wire/errors.js';
import { scopeDir, scopeDirName, scopeOfDirName } from '../../tools/bus/store/layout.js';
import { checkRoot, ensureRoot } from '../../tools/bus/store/root.js';
import { createReporter, listIds, readScopes, readSignalFile, writeSignal } from '../../tools/bus/store/messages.js';
import { resolvePaths } from '../../tools/verbs/env.js';
import { parseChannelName } from '../../tools/wire/names.js';
import { type TempBus, makeTempBus, runInProcess } from '../helpers/temp-bus.js';

let bus: TempBus;
beforeEach(() => {
  bus = makeTempBus();
});
afterEach(() => bus.cleanup());

const mode = (p: string) => statSync(p).mode & 0o777;

describe('bus root', () => {
  it('is $ATTEND_HOME when set', () => {
    expect(resolvePaths({ ATTEND_HOME: '/x/bus', HOME: '/h' }).root).toBe('/x/bus');
    // A relative one is kept as given (never resolved against the cwd) and refused by the root check (issue #10).
    expect(resolvePaths({ ATTEND_HOME: 'rel', HOME: '/h' }).root).toBe('rel');
    expect(() => ensureRoot('rel')).toThrow(/ATTEND_HOME must be an absolute path, not 'rel'/);
  });

  it('else the env-paths user cache dir ($XDG_CACHE_HOME/attend, ~/.cache/attend)', () => {
    expect(resolvePaths({ HOME: '/h', XDG_CACHE_HOME: '/c' }).root).toBe('/c/attend');
    expect(resolvePaths({ HOME: '/h' }).root).toBe('/h/.cache/attend');
    expect(resolvePaths({ HOME: '/h', ATTEND_HOME: '' }).root).toBe('/h/.cache/attend');
  });

  it('attend with no ATTEND_HOME uses ~/.cache/attend', async () => {
    const { ATTEND_HOME: _drop, ...env } = bus.env;
    const r = await runInProcess(['send', 'hi'], { env });
    expect(r.exitCode).toBe(0);
    const root = join(bus.home, '.cache', 'attend');
    expect(readdirSync(join(root, 'signals', '_broadcast')).filter((f) => f.endsWith('.signal'))).toEqual([`${r.stdout.trim()}.signal`]);
  });

  it('is created 0700 with 0700 directories and 0600 files', async () => {
    const r = await runInProcess(['send', 'hi'], { env: bus.env });
    expect(r.exitCode).toBe(0);
    expect(mode(bus.root)).toBe(0o700);
    expect(mode(join(bus.root, 'signals'))).toBe(0o700);
    expect(mode(join(bus.root, 'signals', '_broadcast'))).toBe(0o700);
    expect(mode(join(bus.root, 'signals', '_broadcast', `${r.stdout.trim()}.signal`))).toBe(0o600);
  });

  it('a root writable by group or others is refused: exit 3, one clear line, nothing written', async () => {
    mkdirSync(bus.root, { mode: 0o700 });
    chmodSync(bus.root, 0o777);
    const r = await runInProcess(['send', 'hi'], { env: bus.env });
    expect(r.exitCode).toBe(EXIT.bus);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^attend: the bus root .* is writable by group or others \(mode 777\); run: chmod 700 /);
    expect(readdirSync(bus.root)).toEqual([]);
    chmodSync(bus.root, 0o720);
    expect(() => checkRoot(bus.root)).toThrow(/writable by group or others/);
  });

  it.skipIf(process.getuid?.() !== 0)('a root owned by another user is refused (needs root to chown; skipped when not root)', async () => {
    mkdirSync(bus.root, { mode: 0o700 });
    chownSync(bus.root, 65534, 65534);
    const r = await runInProcess(['inbox'], { env: bus.env });
    expect(r.exitCode).toBe(EXIT.bus);
    expect(r.stderr).toContain(`attend: the bus root ${bus.root} is owned by uid 65534`);
    expect(() => ensureRoot(bus.root, 0)).toThrow(AttendError);
  });

  it('a symbolic link or a file as root is refused', async () => {
    mkdirSync(join(bus.dir, 'real'), { mode: 0o700 });
    symlinkSync(join(bus.dir, 'real'), bus.root);
    expect(() => checkRoot(bus.root)).toThrow(/symbolic link/);
    const file = join(bus.dir, 'file');
    writeFileSync(file, 'x');
    const r = await runInProcess(['send', 'x'], { env: { ...bus.env, ATTEND_HOME: file } });
    expect(r.exitCode).toBe(EXIT.bus);
    expect(r.stderr).toMatch(/^attend: /);
  });
});

describe('layout and names', () => {
  it('maps scopes to directories and back; _ and @ names are never trays', () => {
    expect(scopeDirName({ kind: 'open' })).toBe('_broadcast');
    expect(scopeDirName({ kind: 'channel', name: 'ops' })).toBe('@ops');
    expect(scopeDirName({ kind: 'tray', key: '-srv-p-1' })).toBe('-srv-p-1');
    expect(scopeOfDirName('_broadcast')).toEqual({ kind: 'open' });
    expect(scopeOfDirName('@ops')).toEqual({ kind: 'channel', name: 'ops' });
    expect(scopeOfDirName('_other')).toBeNull();
    expect(scopeOfDirName('@')).toBeNull();
    expect(scopeOfDirName('.hidden')).toBeNull();
    expect(scopeOfDirName('-home-dev-work-47dmtw')).toEqual({ kind: 'tray', key: '-home-dev-work-47dmtw' });
  });

  it.each(['dev|ops', 'équipe', 'a,b', '..', '.', 'open', '#open', 'broadcast', 'a b', ' ops', 'ops\n', '\t', '', '#', 'a/b', '../x', 'x'.repeat(65), '..a', '.x', '-x', '_x', 'a..b', 'Open'])(
    'refuses the channel name %j',
    (name) => {
      expect(parseChannelName(name).ok).toBe(false);
    },
  );

  it.each([
    ['ops', 'ops'],
    ['#ops', 'ops'],
    // Case-insensitive, stored lowercase (issue #10).
    ['Dev.Team_2-b', 'dev.team_2-b'],
    ['a.b', 'a.b'],
  ])('accepts %j as %j', (raw, name) => {
    expect(parseChannelName(raw)).toEqual({ ok: true, name });
  });
});

describe('atomic writes', () => {
  it('leave no temporary files behind and write 0600', () => {
    const dir = join(bus.dir, 'atomic');
    for (let i = 0; i < 200; i++) writeFileAtomic(join(dir, `m${i}.signal`), `line ${i}\n`);
    const names = readdirSync(dir);
    expect(names).toHaveLength(200);
    expect(names.filter((n) => !n.endsWith('.signal'))).toEqual([]);
    expect(mode(join(dir, 'm7.signal'))).toBe(0o600);
  });

  it('clean up the temporary file when the rename fails', () => {
    const dir = join(bus.dir, 'atomic2');
    mkdirSync(join(dir, 'target.signal'), { recursive: true });
    expect(() => writeFileAtomic(join(dir, 'target.signal'), 'x')).toThrow();
    expect(readdirSync(dir)).toEqual(['target.signal']);
  });

  it('readers only read *.signal with a valid id stem', () => {
    const scope = { kind: 'open' } as const;
    const id = 'a1';
    writeSignal(bus.root, scope, id, { from: 'claude:x', project: 'p', cwd: '/p', body: 'real' });
    const dir = scopeDir(bus.root, scope);
    writeFileSync(join(dir, '.a1.signal.123.1.tmp'), 'claude:x|p|/p|half');
    writeFileSync(join(dir, 'notes.txt'), 'claude:x|p|/p|txt');
    writeFileSync(join(dir, 'b2.signal.tmp'), 'claude:x|p|/p|tmp');
    writeFileSync(join(dir, 'bad id.signal'), 'claude:x|p|/p|bad');
    expect(listIds(dir)).toEqual(['a1']);
    expect(readScopes(bus.root, [scope], createReporter(() => {})).map((m) => m.body)).toEqual(['real']);
  });
});

describe('bad files never crash a reader', () => {
  const scope = { kind: 'open' } as const;
  const put = (name: string, data: string | Buffer) => {
    const dir = scopeDir(bus.root, scope);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.signal`), data);
    return join(dir, `${name}.signal`);
  };

  it('skips binary, empty, huge, invalid UTF-8, non-lines, symlinks and directories, reporting each path once', () => {
    const good = put('b0good', 'claude:x|p|/p|hello\n');
    const crlf = put('b1crlf', 'claude:x|p|/p|from windows\r\n');
    const bad = {
      binary: put('c1', Buffer.from([0x63, 0x3a, 0x78, 0x7c, 0x00, 0x7c, 0x7c, 0x01])),
      empty: put('c2', ''),
      huge: put('c3', `claude:x|p|/p|${'x'.repeat(10 * 1024 * 1024)}`),
      utf8: put('c4', Buffer.concat([Buffer.from('claude:x|p|/p|'), Buffer.from([0xc3, 0x28, 0xff])])),
      notLine: put('c5', 'just some text'),
    };
    const link = join(scopeDir(bus.root, scope), 'c6.signal');
    symlinkSync(good, link);
    mkdirSync(join(scopeDir(bus.root, scope), 'c7.signal'));
    const lines: string[] = [];
    const reporter = createReporter((l) => lines.push(l));
    for (let round = 0; round < 2; round++) {
      const msgs = readScopes(bus.root, [scope], reporter);
      expect(msgs.map((m) => [m.id, m.body])).toEqual([
        ['b0good', 'hello'],
        ['b1crlf', 'from windows'],
      ]);
    }
    expect(lines).toHaveLength(7);
    for (const p of [...Object.values(bad), link, join(scopeDir(bus.root, scope), 'c7.signal')]) {
      expect(lines.filter((l) => l.startsWith(`attend: skipped ${p}: `))).toHaveLength(1);
    }
    expect(readSignalFile(bad.huge)).toMatchObject({ ok: false, reason: expect.stringContaining('too large') });
    expect(readSignalFile(bad.utf8)).toEqual({ ok: false, reason: 'invalid UTF-8', bad: true });
    expect(readSignalFile(link)).toMatchObject({ ok: false, reason: expect.stringContaining('symbolic link') });
    expect(readSignalFile(crlf)).toMatchObject({ ok: true });
  });

  it('a file removed between listing and reading is skipped quietly', () => {
    const res = readSignalFile(join(bus.dir, 'gone.signal'));
    expect(res).toEqual({ ok: false, reason: 'removed while reading', gone: true });
  });
});
