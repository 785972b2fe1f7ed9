// Trust through the built binary (issue 14): keys, signed sends, sig= in inbox, held
// messages with `attend inbox --held`, and refusal of a key file with wrong permissions.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/bus/errors.js';
import { scopeDir } from '../../tools/bus/layout.js';
import { attendKey } from '../../tools/wire/names.js';
import { type TempBus, runBin, useTempBus } from '../helpers/bus.js';
import { ids } from '../helpers/delivery.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

describe('attend keys', () => {
  it('shows no key before the first message, then the key every message is signed with', () => {
    const s = session();
    const none = runBin(['keys', '--json'], { env: s.env, cwd: s.cwd });
    expect(none.exitCode, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ node: s.sessionId, current: null, published: [] });
    expect(runBin(['send', 'hello'], { env: s.env, cwd: s.cwd }).exitCode).toBe(0);
    const after = JSON.parse(runBin(['keys', '--json'], { env: s.env, cwd: s.cwd }).stdout);
    expect(after.current).toMatch(/^U[A-Z2-7]{55}$/);
    expect(after.published).toEqual([{ keyId: after.current, created: expect.any(String), current: true }]);
    expect(after.privateKey.startsWith(bus.root)).toBe(false);
  });

  it('rotate keeps the old key published; both messages verify', () => {
    const s = session();
    const r = session();
    runBin(['send', 'before'], { env: s.env, cwd: s.cwd });
    const rot = runBin(['keys', 'rotate', '--json'], { env: s.env, cwd: s.cwd });
    expect(rot.exitCode, rot.stderr).toBe(0);
    const { old, current } = JSON.parse(rot.stdout);
    expect(old).not.toBe(current);
    runBin(['send', 'after'], { env: s.env, cwd: s.cwd });
    const inbox = JSON.parse(runBin(['inbox', '--json'], { env: r.env, cwd: r.cwd }).stdout);
    expect(inbox.messages.map((m: { body: string; sig: string }) => [m.body, m.sig])).toEqual([
      ['after', 'ok'],
      ['before', 'ok'],
    ]);
  });

  it('a key file readable by others is refused with the fix (exit 5), and the send writes nothing', () => {
    const s = session();
    runBin(['send', 'first'], { env: s.env, cwd: s.cwd });
    const keyPath = JSON.parse(runBin(['keys', '--json'], { env: s.env, cwd: s.cwd }).stdout).privateKey;
    chmodSync(keyPath, 0o640);
    const r = runBin(['send', 'second'], { env: s.env, cwd: s.cwd });
    expect(r.exitCode).toBe(EXIT.environment);
    expect(r.stderr).toBe(`attend: the key file ${keyPath} can be read by group or others (mode 640); run: chmod 600 ${keyPath}\n`);
    const inbox = JSON.parse(runBin(['inbox', '--json'], { env: session().env }).stdout);
    expect(inbox.messages.map((m: { body: string }) => m.body)).toEqual(['first']);
  });
});

describe('verification in inbox', () => {
  it('shows sig=ok for attend-written mail and holds a forged line, listed by --held with the reason', () => {
    const victim = session();
    const reader = session();
    expect(runBin(['send', '--to', reader.sessionId, 'genuine'], { env: victim.env, cwd: victim.cwd }).exitCode).toBe(0);
    const forged = ids()();
    writeFileSync(
      join(scopeDir(bus.root, { kind: 'tray', key: attendKey(reader.cwd) }), `${forged}.signal`),
      `claude:${victim.sessionId}|x|/x|from_kind:agent|from_id:${victim.sessionId}|to:${reader.sessionId}|forged order\n`,
    );
    const plain = runBin(['inbox'], { env: reader.env, cwd: reader.cwd });
    expect(plain.stdout).toContain('genuine');
    expect(plain.stdout).toMatch(/sig=ok/);
    expect(plain.stdout).not.toContain('forged order');
    const held = runBin(['inbox', '--held'], { env: reader.env, cwd: reader.cwd });
    expect(held.stdout).toContain('forged order');
    expect(held.stdout).toContain(`held: bad signature: unsigned, but ${victim.sessionId} signs its messages`);
    expect(held.stdout).toContain(`from: claims ${victim.sessionId} (agent) sig=bad`);
    const show = runBin(['inbox', forged], { env: reader.env, cwd: reader.cwd });
    expect(show.exitCode).toBe(EXIT.refused);
    expect(show.stderr).toMatch(/is held: bad signature/);
  });
});
