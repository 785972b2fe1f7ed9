// Keys anchored outside the bus (issue 20 §2) on a real temporary bus: a local node's keys
// are what its rotation record in the key directory vouches for; the bus's lists are a
// cache; the key directory must be private; a key that is gone is replaced by a new identity
// that says so.
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AttendError, EXIT } from '../../tools/wire/errors.js';
import { anchorOf, chainPath, keyDirectoryProblem, keysHealth, trustDirOf } from '../../tools/bus/trust/anchors.js';
import { describeKeys, loadOrCreateKey, privateKeyPath, publicKeysPath, rotateKey } from '../../tools/bus/trust/keys.js';
import { type Message, readMessage, silentReporter, writeSignal } from '../../tools/bus/store/messages.js';
import { createSigner } from '../../tools/bus/trust/signing.js';
import { keyCheckPath, pathStamp, readKeyCheck } from '../../tools/bus/trust/key-check.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import type { Envelope, Scope } from '../../tools/wire/envelope.js';
import { type TempBus, useTempBus } from '../helpers/temp-bus.js';
import { ids } from '../helpers/fixtures.js';
import { keyIdOfFile, keysDirOf, writeSignedWith } from '../helpers/keys.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const LEAD = '11111111-1111-4111-8111-111111111111';
const WORKER = '22222222-2222-4222-8222-222222222222';
const OPEN: Scope = { kind: 'open' };
const keysDir = () => keysDirOf(bus.home);
const signer = () => createSigner({ keysDir: keysDir(), root: bus.root, host: 'devbox', now: Date.now });
const envFrom = (id: string, body = 'hello'): Envelope => ({ from: `claude:${id}`, project: 'a', cwd: '/srv/a', fromKind: 'agent', fromId: id, to: '*', body });
const write = (node: string, body = 'hello', s = signer()) => {
  const id = ids()();
  writeSignal(bus.root, OPEN, id, envFrom(node, body), s);
  return id;
};
const read = (id: string) => readMessage(bus.root, OPEN, id, silentReporter) as Message;

function expectEnv(fn: () => unknown, message: RegExp, hint?: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(AttendError);
  expect((err as AttendError).exitCode).toBe(EXIT.environment);
  expect((err as AttendError).message).toMatch(message);
  if (hint !== undefined) expect((err as AttendError).hint).toEqual({ text: hint });
}

describe('the record in the key directory is the authority', () => {
  it('a first key makes a record beside the private key; the bus keeps a cache of it', () => {
    const id = write(LEAD);
    const rec = readFileSync(chainPath(keysDir(), LEAD), 'utf8');
    expect(rec).toMatch(/^U[A-Z2-7]{55} \d+ first [A-Za-z0-9+/]{86}==\n$/);
    expect(readFileSync(publicKeysPath(bus.root, LEAD), 'utf8').split(' ')[0]).toBe(rec.split(' ')[0]);
    expect(anchorOf(keysDir(), LEAD).keys.map((k) => k.keyId)).toEqual([rec.split(' ')[0]]);
    expect(read(id).sig).toBe('ok');
  });

  it('a key id appended to the bus list is not the node\'s: signing with it as the node is held (attack 3)', () => {
    write(LEAD, 'genuine');
    write(WORKER, 'my own first message'); // the worker's own key, made as any node's is
    const workerKey = privateKeyPath(keysDir(), WORKER);
    appendFileSync(publicKeysPath(bus.root, LEAD), `${keyIdOfFile(workerKey)} ${Date.now()}\n`);
    const id = ids()();
    writeSignedWith(bus.root, OPEN, id, envFrom(LEAD, 'from the lead, honestly'), workerKey, 'devbox');
    expect(read(id)).toMatchObject({ sig: 'bad', sigReason: `the signing key does not belong to ${LEAD} (not in its key record)` });
  });

  it('rotation links the new key to the old one; both verify, and neither is a new identity', () => {
    const before = write(LEAD);
    const r = rotateKey({ keysDir: keysDir(), root: bus.root, node: LEAD, now: Date.now() });
    const after = write(LEAD);
    expect(readFileSync(chainPath(keysDir(), LEAD), 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ').slice(0, 3).join(' ').replace(/ \d+ /, ' _ '))).toEqual([`${r.old} _ first`, `${r.key.keyId} _ rotated`]);
    expect([read(before).sig, read(after).sig]).toEqual(['ok', 'ok']);
    expect(read(after).newKeySince).toBeUndefined();
    expect(describeKeys({ keysDir: keysDir(), root: bus.root, node: LEAD }).published.map((k) => [k.keyId, k.current])).toEqual([
      [r.old, false],
      [r.key.keyId, true],
    ]);
  });

  it('a line appended to the record that the last key did not sign is refused, and the keys before it stand', () => {
    const genuine = write(LEAD);
    write(WORKER);
    const workerKey = privateKeyPath(keysDir(), WORKER);
    const workerId = keyIdOfFile(workerKey);
    // A forged rotation: the worker's key, "signed" with its own key rather than the lead's.
    const forgedLine = readFileSync(chainPath(keysDir(), WORKER), 'utf8').replace(' first ', ' rotated ');
    appendFileSync(chainPath(keysDir(), LEAD), forgedLine);
    const forged = ids()();
    writeSignedWith(bus.root, OPEN, forged, envFrom(LEAD, 'as the lead'), workerKey, 'devbox');
    expect(read(forged)).toMatchObject({ sig: 'bad', sigReason: expect.stringContaining(`the key record of ${LEAD} is broken at line 2: not signed by the key before it`) });
    expect(read(genuine).sig).toBe('ok');
    expect(anchorOf(keysDir(), LEAD).keys.map((k) => k.keyId)).not.toContain(workerId);
    expect(keysHealth(keysDir()).broken).toEqual([{ node: LEAD, reason: 'line 2: not signed by the key before it' }]);
  });

  it("doctor's check keeps what it found per record under the record's stat, and a record changed since is checked again, even with its size and mtime put back", () => {
    write(LEAD);
    write(WORKER);
    // A whole second, so the mtime can be put back exactly (to the nanosecond) after the edit.
    const path = chainPath(keysDir(), LEAD);
    const second = Math.floor(Date.now() / 1000) - 60;
    utimesSync(path, second, second);
    expect(keysHealth(keysDir())).toMatchObject({ nodes: 2, broken: [], resets: [] });
    const checked = JSON.parse(readFileSync(join(trustDirOf(keysDir()), '.checked'), 'utf8'));
    expect(Object.keys(checked.records).sort()).toEqual([LEAD, WORKER]);
    // Unchanged: the same answer from what was kept.
    expect(keysHealth(keysDir())).toMatchObject({ nodes: 2, broken: [], resets: [] });
    // One signature character flipped in place: same inode and size, the mtime put back by hand.
    const text = readFileSync(path, 'utf8');
    const before = statSync(path, { bigint: true });
    const at = text.length - 10;
    writeFileSync(path, text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1));
    utimesSync(path, second, second);
    const after = statSync(path, { bigint: true });
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);
    expect(keysHealth(keysDir()).broken).toEqual([{ node: LEAD, reason: 'line 1: not signed by its own key' }]);
    // A kept file that does not parse is no answer: every record is checked.
    writeFileSync(join(trustDirOf(keysDir()), '.checked'), '{"v":1,"rec');
    expect(keysHealth(keysDir()).broken).toEqual([{ node: LEAD, reason: 'line 1: not signed by its own key' }]);
  });

  it('a key made by an attend from before the record is anchored on first sight, so what it signed verifies', () => {
    const old = write(LEAD);
    rmSync(chainPath(keysDir(), LEAD));
    expect(read(old).sig).toBe('ok');
    expect(readFileSync(chainPath(keysDir(), LEAD), 'utf8')).toMatch(/ first /);
  });
});

describe('the key directory', () => {
  it('open to group or others is refused with the fix, exit 5, and nothing is written', () => {
    write(LEAD);
    chmodSync(keysDir(), 0o755);
    const id = ids()();
    expectEnv(() => writeSignal(bus.root, OPEN, id, envFrom(LEAD), signer()), /^the key directory .* is open to group or others \(mode 755\)$/, `run: chmod 700 ${keysDir()}`);
    expect(readMessage(bus.root, OPEN, id, silentReporter)).toBeNull();
    expect(keyDirectoryProblem(keysDir())?.message).toMatch(/mode 755/);
  });

  it('readers refuse every record in a trust directory that is not private (anyone could have put one there)', () => {
    const id = write(LEAD);
    chmodSync(trustDirOf(keysDir()), 0o777);
    expect(read(id)).toMatchObject({ sig: 'bad', sigReason: expect.stringMatching(/the trust directory .* is open to group or others \(mode 777\)/) });
    // A send refuses it too.
    expectEnv(() => loadOrCreateKey({ keysDir: keysDir(), root: bus.root, node: WORKER, now: Date.now() }), /^the trust directory .* is open to group or others \(mode 777\)$/, `run: chmod 700 ${trustDirOf(keysDir())}`);
  });

  it('readers do not need the key directory: a reader that cannot see it (a sandbox hides it) still verifies', () => {
    const id = write(LEAD);
    // What a command in the sandbox sees: an empty directory (a tmpfs over it).
    renameSync(keysDir(), `${keysDir()}.hidden`);
    mkdirSync(keysDir(), { mode: 0o700 });
    expect(read(id).sig).toBe('ok');
  });

  it('a symbolic link is refused, whatever it points at', () => {
    const real = join(bus.dir, 'elsewhere');
    mkdirSync(real, { mode: 0o700 });
    mkdirSync(join(bus.home, '.config', 'attend'), { recursive: true, mode: 0o700 });
    symlinkSync(real, keysDir());
    expectEnv(() => loadOrCreateKey({ keysDir: keysDir(), root: bus.root, node: LEAD, now: Date.now() }), /is a symbolic link$/);
    expect(existsSync(join(real, `${LEAD}.key`))).toBe(false);
  });

  it('one another user owns is refused', () => {
    write(LEAD);
    expect(keyDirectoryProblem(keysDir(), (process.getuid?.() ?? 0) + 1)?.message).toMatch(/is owned by uid \d+, not you/);
  });
});

describe('a key that disappears', () => {
  it('is replaced by a new identity: the record says reset, readers mark it, doctor lists it; the old messages still verify', () => {
    const before = write(LEAD);
    const oldKey = keyIdOfFile(privateKeyPath(keysDir(), LEAD));
    rmSync(privateKeyPath(keysDir(), LEAD));
    const warned: string[] = [];
    const s = createSigner({ keysDir: keysDir(), root: bus.root, host: 'devbox', now: Date.now, warn: (l) => warned.push(l) });
    const after = write(LEAD, 'hello again', s);
    expect(warned).toEqual([expect.stringMatching(new RegExp(`^attend: the signing key of ${LEAD} was gone; a new key replaces it`))]);
    const lines = readFileSync(chainPath(keysDir(), LEAD), 'utf8').split('\n').filter(Boolean);
    expect(lines.map((l) => l.split(' ')[2])).toEqual(['first', 'reset']);
    expect(lines[0]!.startsWith(oldKey)).toBe(true);
    expect(read(before)).toMatchObject({ sig: 'ok' });
    expect(read(before).newKeySince).toBeUndefined();
    expect(read(after)).toMatchObject({ sig: 'ok', newKeySince: expect.any(Number) });
    expect(keysHealth(keysDir()).resets).toEqual([{ node: LEAD, since: read(after).newKeySince }]);
  });

  it('with its record gone too, the bus cache still shows it had one: the new key says reset', () => {
    write(LEAD);
    // The whole config moved away (a new machine, a wiped config).
    renameSync(keysDir(), `${keysDir()}.gone`);
    renameSync(trustDirOf(keysDir()), `${trustDirOf(keysDir())}.gone`);
    const after = write(LEAD);
    expect(readFileSync(chainPath(keysDir(), LEAD), 'utf8')).toMatch(/ reset /);
    expect(read(after).newKeySince).toEqual(expect.any(Number));
  });

  it('a key the bus never knew for the node, with the record gone, is a new identity (not taken as the key of before)', () => {
    const before = write(LEAD);
    write(WORKER);
    // Someone removes the lead's record and puts another key in its place.
    rmSync(chainPath(keysDir(), LEAD));
    renameSync(privateKeyPath(keysDir(), WORKER), privateKeyPath(keysDir(), LEAD));
    const after = write(LEAD);
    expect(readFileSync(chainPath(keysDir(), LEAD), 'utf8')).toMatch(/^\S+ \d+ reset /);
    expect(read(after)).toMatchObject({ sig: 'ok', newKeySince: expect.any(Number) });
    // The old key is in no record any more: what it signed no longer verifies.
    expect(read(before).sig).toBe('bad');
  });

  it('a key file whose record lists other keys (restored, or put there by hand) is a new identity too', () => {
    write(LEAD);
    const other = join(bus.dir, 'other.key');
    write(WORKER);
    renameSync(privateKeyPath(keysDir(), WORKER), other);
    writeFileSync(privateKeyPath(keysDir(), LEAD), readFileSync(other), { mode: 0o600 });
    const after = write(LEAD);
    expect(read(after)).toMatchObject({ sig: 'ok', newKeySince: expect.any(Number) });
  });
});

describe('what the last load found (key-check.ts)', () => {
  const lead = () => ({ keysDir: keysDir(), root: bus.root, node: LEAD, now: Date.now() });
  const checked = () => readKeyCheck(keyCheckPath(keysDir(), LEAD));
  /** Put `text` in place of the key file as attend (and most editors) replace a file: a new file renamed over it. */
  const replaceKeyFile = (text: string | Buffer) => {
    const tmp = join(keysDir(), 'replacement.tmp');
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, privateKeyPath(keysDir(), LEAD));
  };
  const warm = () => {
    write(LEAD);
    write(LEAD);
  };

  it('a send records the key id and the stamps it checked; the next send signs by it and verifies', () => {
    warm();
    const c = checked();
    expect(c).toEqual({
      file: expect.stringMatching(/^\d+:\d+:\d+:/),
      x: (JSON.parse(readFileSync(privateKeyPath(keysDir(), LEAD), 'utf8')) as { x: string }).x,
      keyId: keyIdOfFile(privateKeyPath(keysDir(), LEAD)),
      record: pathStamp(chainPath(keysDir(), LEAD)),
      list: pathStamp(publicKeysPath(bus.root, LEAD)),
    });
    expect(read(write(LEAD)).sig).toBe('ok');
    expect(checked()).toEqual(c);
  });

  it('a replaced key file is checked again: a public half that is not its private half\'s is refused', () => {
    warm();
    write(WORKER);
    const mine = JSON.parse(readFileSync(privateKeyPath(keysDir(), LEAD), 'utf8')) as Record<string, string>;
    const theirs = JSON.parse(readFileSync(privateKeyPath(keysDir(), WORKER), 'utf8')) as Record<string, string>;
    // The check file's public half, with another key's private half.
    replaceKeyFile(`${JSON.stringify({ ...mine, d: theirs.d })}\n`);
    expectEnv(() => loadOrCreateKey(lead()), /is not an Ed25519 private key \(its public half \(x\) does not belong to its private key \(d\)\)$/);
  });

  it('a replaced key file signs under its own key id, not the one the check file names', () => {
    warm();
    const before = checked()!.keyId;
    write(WORKER);
    replaceKeyFile(readFileSync(privateKeyPath(keysDir(), WORKER)));
    const id = write(LEAD);
    const now = keyIdOfFile(privateKeyPath(keysDir(), LEAD));
    expect(now).not.toBe(before);
    expect(readFileSync(join(scopeDir(bus.root, OPEN), `${id}.sig`), 'utf8')).toContain(`key ${now}\n`);
    expect(read(id)).toMatchObject({ sig: 'ok', newKeySince: expect.any(Number) });
    expect(checked()?.keyId).toBe(now);
  });

  it('a key file whose mode changed is refused, whatever the check file says; back to 0600 it signs again', () => {
    warm();
    const path = privateKeyPath(keysDir(), LEAD);
    chmodSync(path, 0o644);
    expectEnv(() => loadOrCreateKey(lead()), /can be read by group or others \(mode 644\)$/, `run: chmod 600 ${path}`);
    chmodSync(path, 0o600);
    expect(read(write(LEAD)).sig).toBe('ok');
  });

  it('a record that changed is read again: one gone is made again, listing the key', () => {
    warm();
    rmSync(chainPath(keysDir(), LEAD));
    const id = write(LEAD);
    expect(readFileSync(chainPath(keysDir(), LEAD), 'utf8')).toMatch(new RegExp(`^${checked()!.keyId} \\d+ first `));
    expect(read(id).sig).toBe('ok');
  });

  it('a bus list that changed is read again: one gone is published again', () => {
    warm();
    rmSync(publicKeysPath(bus.root, LEAD));
    write(LEAD);
    expect(readFileSync(publicKeysPath(bus.root, LEAD), 'utf8')).toMatch(new RegExp(`^${checked()!.keyId} \\d+\\n$`));
  });

  it('a check file that is not one, or a symbolic link, is ignored and replaced; what a link points at is not touched', () => {
    warm();
    writeFileSync(keyCheckPath(keysDir(), LEAD), 'attend-key-check v1\nx nonsense\n', { mode: 0o600 });
    expect(read(write(LEAD)).sig).toBe('ok');
    expect(checked()?.keyId).toBe(keyIdOfFile(privateKeyPath(keysDir(), LEAD)));
    const target = join(bus.dir, 'elsewhere.txt');
    writeFileSync(target, 'not yours');
    rmSync(keyCheckPath(keysDir(), LEAD));
    symlinkSync(target, keyCheckPath(keysDir(), LEAD));
    expect(read(write(LEAD)).sig).toBe('ok');
    expect(readFileSync(target, 'utf8')).toBe('not yours');
    expect(checked()?.keyId).toBe(keyIdOfFile(privateKeyPath(keysDir(), LEAD)));
  });
});
