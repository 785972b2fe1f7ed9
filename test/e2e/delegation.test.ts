// Verified on_behalf_of (issue 14 §5): the human signs a delegation for a session; its
// messages with on_behalf_of show (verified) while the delegation covers them and
// (claimed) otherwise, in the drain header and in inbox.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { delegate, delegationFile } from '../../tools/bus/trust/delegation.js';
import { EXIT } from '../../tools/wire/errors.js';
import { loadOrCreateKey } from '../../tools/bus/trust/keys.js';
import { ME, type TempBus, runBin, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));

const drain = (s: { env: Record<string, string>; cwd: string }) => runBin(['inbox', '--drain', '--format', 'plain'], { env: s.env, cwd: s.cwd, input: '{}' });
const inboxJson = (s: { env: Record<string, string>; cwd: string }) => JSON.parse(runBin(['inbox', '--json'], { env: s.env, cwd: s.cwd }).stdout).messages as { body: string; onBehalfOfStatus?: string; onBehalfOfReason?: string }[];

describe('attend delegate', () => {
  it('verified while the delegation covers the message; claimed without one', () => {
    const worker = session({ name: 'worker' });
    const reader = session({ name: 'reader' });
    const claim = runBin(['send', '--to', reader.sessionId, '--on-behalf-of', ME, 'before any delegation'], { env: worker.env, cwd: worker.cwd });
    expect(claim.exitCode, claim.stderr).toBe(0);
    const d = runBin(['delegate', worker.sessionId, '--ttl', '1h', '--json'], { env: bus.env });
    expect(d.exitCode, d.stderr).toBe(0);
    expect(JSON.parse(d.stdout)).toMatchObject({ principal: ME, delegate: worker.sessionId, scopes: ['*'] });
    expect(runBin(['send', '--to', reader.sessionId, '--on-behalf-of', ME, 'approved by tester'], { env: worker.env, cwd: worker.cwd }).exitCode).toBe(0);
    const out = drain(reader).stdout;
    expect(out).toMatch(new RegExp(`on_behalf_of=${ME} \\(claimed\\) to=\\S+ id=\\S+\\]\\nmessage from worker .*\\n  │ before any delegation`));
    expect(out).toMatch(new RegExp(`on_behalf_of=${ME} \\(verified\\) to=\\S+ id=\\S+\\]\\nmessage from worker .*\\n  │ approved by tester`));
    const msgs = inboxJson(reader);
    expect(msgs.find((m) => m.body === 'approved by tester')?.onBehalfOfStatus).toBe('verified');
    expect(msgs.find((m) => m.body === 'before any delegation')).toMatchObject({ onBehalfOfStatus: 'claimed', onBehalfOfReason: 'the message predates the delegation' });
    expect(runBin(['inbox'], { env: reader.env, cwd: reader.cwd }).stdout).toContain(`on behalf of ${ME} (verified)`);
  });

  it('an agent cannot delegate (exit 4); bad --ttl and --scope are usage errors', () => {
    const worker = session();
    const r = runBin(['delegate', worker.sessionId], { env: worker.env, cwd: worker.cwd });
    expect(r.exitCode).toBe(EXIT.refused);
    expect(r.stderr).toMatch(/^attend: only a person delegates/);
    expect(runBin(['delegate', worker.sessionId, '--ttl', 'forever'], { env: bus.env }).exitCode).toBe(EXIT.usage);
    expect(runBin(['delegate', worker.sessionId, '--scope', 'a b'], { env: bus.env }).exitCode).toBe(EXIT.usage);
  });

  it('a scope: a channel delegation does not cover a direct message', () => {
    const worker = session();
    const reader = session();
    expect(runBin(['delegate', worker.sessionId, '--scope', 'ops'], { env: bus.env }).exitCode).toBe(0);
    runBin(['send', '--to', reader.sessionId, '--on-behalf-of', ME, 'direct'], { env: worker.env, cwd: worker.cwd });
    expect(inboxJson(reader)[0]).toMatchObject({ onBehalfOfStatus: 'claimed', onBehalfOfReason: expect.stringMatching(/does not cover tray:/) });
  });
});

describe('tampering with delegations', () => {
  const keysDir = () => join(bus.home, '.config', 'attend', 'keys');
  function setup(mutate: (file: string) => void, opts: { ttlMs?: number; now?: number } = {}) {
    const worker = session();
    const reader = session();
    delegate({ root: bus.root, keysDir: keysDir(), principal: { kind: 'human', id: ME }, delegate: worker.sessionId, scopes: ['*'], now: opts.now ?? Date.now(), ttlMs: opts.ttlMs ?? 3_600_000 });
    mutate(delegationFile(bus.root, ME, worker.sessionId));
    runBin(['send', '--to', reader.sessionId, '--on-behalf-of', ME, 'please'], { env: worker.env, cwd: worker.cwd });
    return inboxJson(reader)[0]!;
  }

  it('an expired delegation', () => {
    expect(setup(() => {}, { now: Date.now() - 7_200_000, ttlMs: 3_600_000 })).toMatchObject({ onBehalfOfStatus: 'claimed', onBehalfOfReason: expect.stringMatching(/expired/) });
  });

  it('an expiry pushed out by hand (the signature covers it)', () => {
    const m = setup(
      (f) => {
        const d = JSON.parse(readFileSync(f, 'utf8'));
        d.expires += 365 * 86_400_000;
        writeFileSync(f, JSON.stringify(d));
      },
      { now: Date.now() - 7_200_000, ttlMs: 3_600_000 },
    );
    expect(m).toMatchObject({ onBehalfOfStatus: 'claimed', onBehalfOfReason: 'the delegation signature does not verify' });
  });

  it('a delegation signed by the wrong key (a key that is not the principal’s)', () => {
    const m = setup((f) => {
      const other = loadOrCreateKey({ keysDir: keysDir(), root: bus.root, node: 'mallory', now: Date.now() });
      const d = JSON.parse(readFileSync(f, 'utf8'));
      d.principalKey = other.keyId;
      writeFileSync(f, JSON.stringify(d));
    });
    expect(m).toMatchObject({ onBehalfOfStatus: 'claimed', onBehalfOfReason: `the delegation is signed by a key that is not ${ME}'s` });
  });

  it('a truncated delegation file', () => {
    const m = setup((f) => writeFileSync(f, readFileSync(f, 'utf8').slice(0, 40)));
    expect(m).toMatchObject({ onBehalfOfStatus: 'claimed', onBehalfOfReason: 'the delegation file does not parse' });
  });
});
