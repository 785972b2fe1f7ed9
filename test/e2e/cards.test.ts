// Signed A2A cards through the built binary (issue 20, must have 6): `attend whoami --card`
// piped into `attend card verify -`, a tampered card refused with one line and exit 4, and
// a peer checking a card on a machine that has none of the bus's key lists.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { BIN, type TempBus, runBin, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

/** A fresh HOME and bus that have never seen the card's node: a peer elsewhere. */
function stranger(): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), 'attend-peer-'));
  return { ...bus.env, HOME: home, ATTEND_HOME: join(home, 'bus'), XDG_CONFIG_HOME: join(home, '.config') };
}

describe('signed A2A cards', () => {
  it('attend whoami --card | attend card verify - succeeds, through a real pipe', () => {
    const s = session({ name: 'api' });
    const r = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" whoami --card | "${process.execPath}" "${BIN}" card verify -`], { env: s.env, cwd: s.env.HOME, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^verified: api \\(${s.sessionId}\\), signed by its key U[A-Z2-7]{55}\\n$`));
  });

  it('a tampered card exits 4 with one line; not JSON exits 2; no file exits 1', () => {
    const s = session({ name: 'api' });
    const text = runBin(['whoami', '--card'], { env: s.env }).stdout;
    const tampered = text.replace('"name": "api"', '"name": "lead"');
    expect(tampered).not.toBe(text);
    const r = runBin(['card', 'verify', '-'], { env: s.env, input: tampered });
    expect(r.exitCode).toBe(EXIT.refused);
    expect(r.stderr).toBe('attend: the card does not verify: the signature does not match the card (altered after it was signed, or signed by another key)\n');
    const json = runBin(['card', 'verify', '-', '--json'], { env: s.env, input: tampered });
    expect(json.exitCode).toBe(EXIT.refused);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false });
    expect(runBin(['card', 'verify', '-'], { env: s.env, input: '{"name":' }).exitCode).toBe(EXIT.usage);
    expect(runBin(['card', 'verify', join(bus.root, 'no-such.json')], { env: s.env }).exitCode).toBe(EXIT.notFound);
  });

  it('a peer with none of the bus’s key lists verifies the card a session published, as peers --cards shows it', () => {
    const s = session({ name: 'api' });
    expect(runBin(['whoami', '--card'], { env: s.env }).exitCode).toBe(0);
    // The person's view of the bus: the session's own signed card, not one the person signed.
    const cards = JSON.parse(runBin(['peers', '--cards'], { env: bus.env }).stdout) as { name: string; signatures?: unknown[] }[];
    const api = cards.find((c) => c.name === 'api');
    expect(api?.signatures).toHaveLength(1);
    const peer = stranger();
    const file = join(peer.HOME!, 'api.json');
    writeFileSync(file, JSON.stringify(api));
    const r = runBin(['card', 'verify', file, '--id', s.sessionId], { env: peer });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    // Checking needed no bus: the peer's was never made.
    expect(existsSync(peer.ATTEND_HOME!)).toBe(false);
    expect(runBin(['card', 'verify', file, '--id', 'someone-else'], { env: peer }).exitCode).toBe(EXIT.refused);
  });
});
