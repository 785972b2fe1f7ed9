// Trust through the built binary (issue 14): keys, signed sends, sig= in inbox, held
// messages with `attend inbox --held`, and refusal of a key file with wrong permissions.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBusSource } from '../../tools/chat/bus-source.js';
import { sidecarPath } from '../../tools/bus/trust/signing.js';
import { useKeyDirectory } from '../../tools/bus/trust/anchors.js';
import { EXIT } from '../../tools/wire/errors.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { attendKey } from '../../tools/wire/names.js';
import { BIN, ME, type TempBus, runBin, useTempBus, waitFor } from '../helpers/bus.js';
import { type SensorProc, ids, startSensor } from '../helpers/delivery.js';

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

describe('the send fast path stays light', () => {
  it('node:crypto loads only for a command that signs or verifies', () => {
    const s = session();
    // A preload that says, as the process exits, whether node:crypto was ever loaded.
    const probe = join(bus.dir, 'probe.cjs');
    writeFileSync(probe, `process.on('exit', () => require('node:fs').writeSync(2, 'crypto loaded: ' + process.moduleLoadList.includes('NativeModule crypto') + '\\n'));`);
    const run = (args: string[]) => {
      const r = spawnSync(process.execPath, ['--require', probe, BIN, ...args], { env: s.env, cwd: s.cwd, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return /crypto loaded: (true|false)/.exec(r.stderr)?.[1];
    };
    expect(run(['whoami'])).toBe('false');
    expect(run(['peers'])).toBe('false');
    expect(run(['send', 'signed'])).toBe('true');
  });

  it('zod is neither bundled into it nor loaded by it, policy file or not (the policy is checked by hand)', () => {
    // The search and claim-check fast paths too: each reads the policy, and zod cost each ~45 ms.
    for (const name of ['fast-send.cjs', 'fast-search.cjs', 'fast-claims.cjs']) {
      const bundle = readFileSync(new URL(`../../dist/tools/cli/${name}`, import.meta.url), 'utf8');
      expect(bundle, name).not.toMatch(/class ZodError|ZodType/);
      expect(bundle, name).not.toMatch(/\("zod"\)/);
    }
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
    // Held messages are never shown to a session, even when it asks.
    const asked = runBin(['inbox', '--held'], { env: reader.env, cwd: reader.cwd });
    expect(asked.exitCode).toBe(EXIT.refused);
    expect(asked.stdout).toBe('');
    expect(asked.stderr).toMatch(/^attend: held messages are shown only to the person who owns the bus/);
    const held = runBin(['inbox', '--held'], { env: bus.env });
    expect(held.stdout).toContain('forged order');
    expect(held.stdout).toContain(`held: bad signature: unsigned, but ${victim.sessionId} signs its messages`);
    expect(held.stdout).toContain(`from: claims ${victim.sessionId} (agent) sig=bad`);
    const show = runBin(['inbox', forged], { env: reader.env, cwd: reader.cwd });
    expect(show.exitCode).toBe(EXIT.refused);
    expect(show.stderr).toMatch(/is held: bad signature/);
  });
});

describe('tampering seen by the sensor and by chat', () => {
  const sensors: SensorProc[] = [];
  afterEach(() => {
    for (const p of sensors.splice(0)) p.proc.kill('SIGKILL');
  });

  /** Four tampered copies around genuine mail, in the reader's tray. */
  function tamper(victim: { env: Record<string, string>; cwd: string; sessionId: string }, reader: { cwd: string; sessionId: string }, other: { cwd: string }) {
    const tray = scopeDir(bus.root, { kind: 'tray', key: attendKey(reader.cwd) });
    const otherTray = scopeDir(bus.root, { kind: 'tray', key: attendKey(other.cwd) });
    const send = (body: string) => {
      const r = runBin(['send', '--to', reader.sessionId, body], { env: victim.env, cwd: victim.cwd });
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    mkdirSync(tray, { recursive: true, mode: 0o700 });
    send('WARMUP'); // the victim now has a key: unsigned lines claiming it are bad
    // 1. a hand-written line claiming the victim's from_id
    writeFileSync(join(tray, `${ids()()}.signal`), `claude:${victim.sessionId}|x|/x|from_kind:agent|from_id:${victim.sessionId}|to:${reader.sessionId}|FORGED-LINE\n`);
    // 2. an altered body
    const a = send('ORIGINAL-BODY');
    writeFileSync(join(tray, `${a}.signal`), readFileSync(join(tray, `${a}.signal`), 'utf8').replace('ORIGINAL-BODY', 'ALTERED-BODY'));
    // 3. a signed message copied in from another tray (victim → other, copied to reader)
    const r = runBin(['send', '--to', reader.sessionId, 'COPIED-IN'], { env: victim.env, cwd: victim.cwd });
    const c = r.stdout.trim();
    mkdirSync(otherTray, { recursive: true });
    // move it: the copy sits in another directory than the one it was signed for
    copyFileSync(join(tray, `${c}.signal`), join(otherTray, `${c}.signal`));
    copyFileSync(sidecarPath(join(tray, `${c}.signal`)), sidecarPath(join(otherTray, `${c}.signal`)));
    // 4. a sidecar taken from another message
    const d = send('SWAPPED-SIDECAR');
    const e = send('DONOR');
    copyFileSync(sidecarPath(join(tray, `${e}.signal`)), sidecarPath(join(tray, `${d}.signal`)));
    return { tray, otherTray };
  }

  it('the sensor shows genuine mail with sig=ok and none of the tampered copies', async () => {
    const victim = session({ name: 'victim' });
    const reader = session({ name: 'reader' });
    const other = session({ name: 'other' });
    // Tampered before the sensor starts: its cold start delivers all addressed mail.
    tamper(victim, reader, other);
    const p = startSensor(reader.env, [], reader.cwd);
    sensors.push(p);
    await waitFor(() => /sensor (started|resumed)/.test(p.stdout()), { what: 'the banner' });
    runBin(['send', '--to', reader.sessionId, 'LAST-GENUINE'], { env: victim.env, cwd: victim.cwd });
    await waitFor(() => p.stdout().includes('LAST-GENUINE'), { what: 'the last genuine message', timeoutMs: 20_000 });
    const out = p.stdout();
    for (const bad of ['FORGED-LINE', 'ALTERED-BODY', 'ORIGINAL-BODY', 'SWAPPED-SIDECAR']) expect(out, out).not.toContain(bad);
    expect(out).toContain('DONOR');
    expect(out).toMatch(new RegExp(`from=${victim.sessionId} sig=ok to=${reader.sessionId} id=`));
    // The person who owns the bus sees all four, wherever they sit, with the reasons.
    const held = JSON.parse(runBin(['inbox', '--held', '--json', '--limit', '50'], { env: bus.env }).stdout).messages as { body: string; held: string }[];
    expect(held.map((m) => m.body).sort()).toEqual(['ALTERED-BODY', 'COPIED-IN', 'FORGED-LINE', 'SWAPPED-SIDECAR']);
    expect(held.find((m) => m.body === 'COPIED-IN')?.held).toMatch(/^bad signature: the signature does not match/);
  });

  it('the drain verifies what it presents: no tampered copy is shown, whatever it leaves in the remainder', () => {
    const victim = session({ name: 'victim' });
    const reader = session({ name: 'reader' });
    const other = session({ name: 'other' });
    tamper(victim, reader, other);
    // More genuine mail than the drain shows in full, so some is only counted.
    for (let i = 0; i < 12; i++) expect(runBin(['send', '--to', reader.sessionId, `GENUINE-${i}`], { env: victim.env, cwd: victim.cwd }).exitCode).toBe(0);
    const r = runBin(['inbox', '--drain', '--format', 'plain', '--trace'], { env: reader.env, cwd: reader.cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    for (const bad of ['FORGED-LINE', 'ALTERED-BODY', 'ORIGINAL-BODY', 'SWAPPED-SIDECAR']) expect(r.stdout, r.stdout).not.toContain(bad);
    expect(r.stdout).toContain('DONOR');
    expect(r.stdout).toMatch(/\+\d+ more — attend inbox/);
    // Ten shown in full, every one of them verified.
    expect(r.stdout.match(/^\[attend message .* sig=ok /gm)?.length, r.stdout).toBe(10);
    expect(r.stdout).not.toMatch(/sig=bad/);
    // Nothing is left pending: the held copies were consumed like every held message.
    expect(runBin(['inbox', '--drain', '--format', 'plain'], { env: reader.env, cwd: reader.cwd }).stdout).toBe('');
  });

  it('chat (the operator view) never lists a tampered copy and counts what it holds', () => {
    const victim = session({ name: 'victim' });
    const reader = session({ name: 'reader' });
    const other = session({ name: 'other' });
    tamper(victim, reader, other);
    const statuses: string[] = [];
    // As attend chat's context does: this bus's local keys are in this key directory (issue 20).
    useKeyDirectory(bus.root, join(bus.home, '.config', 'attend', 'keys'));
    const src = createBusSource({ root: bus.root, reader: { id: ME, kind: 'human', user: ME } });
    src.start({ arrived: () => {}, status: (t) => t && statuses.push(t), channels: () => {} });
    try {
      const { messages } = src.loadInitial(50);
      const bodies = messages.map((m) => m.body);
      expect(bodies).toEqual(expect.arrayContaining(['DONOR']));
      for (const bad of ['FORGED-LINE', 'ALTERED-BODY', 'SWAPPED-SIDECAR']) expect(bodies).not.toContain(bad);
      // COPIED-IN is genuine where it was written and held where it was copied to.
      expect(messages.filter((m) => m.body === 'COPIED-IN').map((m) => m.sig)).toEqual(['ok']);
      expect(statuses.at(-1)).toMatch(/^\d+ messages held back; attend inbox --held$/);
      expect(Number(statuses.at(-1)!.split(' ')[0])).toBe(4);
    } finally {
      src.stop();
    }
  });

  it('chat under a policy that does not parse shows nothing and says why', () => {
    const victim = session({ name: 'victim' });
    const reader = session({ name: 'reader' });
    runBin(['send', '--to', reader.sessionId, 'hello'], { env: victim.env, cwd: victim.cwd });
    writeFileSync(join(bus.root, 'policy.json'), '{"version": 1,\n "open": "nobody"}\n');
    const statuses: string[] = [];
    const src = createBusSource({ root: bus.root, reader: { id: ME, kind: 'human', user: ME } });
    src.start({ arrived: () => {}, status: (t) => t && statuses.push(t), channels: () => {} });
    try {
      expect(src.loadInitial(50).messages).toEqual([]);
      expect(statuses.at(-1)).toMatch(/^the policy did not parse, so nothing is delivered: .*policy\.json:2: open: /);
    } finally {
      src.stop();
    }
  });
});
