// The trust verbs (tools/verbs/trust/, issue 19) in-process over a temporary bus: the use
// cases behind `attend allow/deny/grants/policy/keys/delegate`, as any front end calls them.
// No child processes: the person is whoever runs the tests, an agent is declared with
// ATTEND_AGENT (tools/identity/resolve.ts).

import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { parseInput } from '../../tools/verbs/input.js';
import {
  delegateInput,
  grantInput,
  policyInput,
  runAllow,
  runCards,
  runDelegate,
  runDeny,
  runGrants,
  runKeys,
  runPolicy,
  runRotateKey,
  runTree,
  runVerifyCard,
  runWhoamiCard,
} from '../../tools/verbs/trust/index.js';
import { EXIT } from '../../tools/wire/errors.js';
import { DEFAULT_POLICY } from '../../tools/wire/permit.js';
import { ME, type TempBus, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const person = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid });
const agent = () => createVerbCtx({ env: { ...bus.env, ATTEND_AGENT: 'codex' }, cwd: bus.home, pid: process.pid });
const policyPath = () => join(bus.root, 'policy.json');
const fileOrNone = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : null);

describe('allow, deny, grants', () => {
  it('round trip: a grant both ways, a deny that takes one back, and grants reads what was written', () => {
    const ctx = person();
    expect(runGrants(ctx)).toEqual({ file: policyPath(), exists: false, policy: DEFAULT_POLICY });

    // Nobody live by these names: each is taken as an id as written.
    const a = runAllow(ctx, { from: 'w1', to: 'w2', both: true });
    expect(a).toMatchObject({ from: 'w1', to: 'w2', both: true, channel: null, file: policyPath() });
    expect(a.policy.allow).toEqual([{ from: 'w1', to: 'w2' }, { from: 'w2', to: 'w1' }]);

    const d = runDeny(ctx, { from: 'w1', to: 'w2' });
    expect(d.policy).toMatchObject({ allow: [{ from: 'w2', to: 'w1' }], deny: [{ from: 'w1', to: 'w2' }] });

    const c = runAllow(ctx, { from: 'w3', to: '#open' });
    expect(c.to).toBe('#open');
    expect(runAllow(ctx, { from: 'w3', to: 'w1', channel: '#ops' })).toMatchObject({ channel: 'ops' });

    const g = runGrants(person());
    expect(g.exists).toBe(true);
    expect(g.policy.allow).toEqual([{ from: 'w2', to: 'w1' }, { from: 'w3', to: '#open' }, { from: 'w3', to: 'w1', channel: 'ops' }]);
    expect(g.policy.deny).toEqual([{ from: 'w1', to: 'w2' }]);
  });

  it('an agent cannot change grants (exit 4) and the file is untouched', () => {
    runAllow(person(), { from: 'w1', to: 'w2' });
    const before = fileOrNone(policyPath());
    for (const change of [() => runAllow(agent(), { from: 'codex', to: 'w1' }), () => runDeny(agent(), { from: 'w1', to: 'w2' }), () => runPolicy(agent(), { mode: 'family' })]) {
      expect(change).toThrow(expect.objectContaining({ exitCode: EXIT.refused, message: expect.stringMatching(/^only the human who owns the bus can change grants; codex@\S+ is an agent$/) }));
    }
    expect(fileOrNone(policyPath())).toBe(before);
  });

  it('bad input is a usage error naming the field, whichever front end sent it', () => {
    expect(() => runAllow(person(), { from: ' ', to: 'w2' })).toThrow(expect.objectContaining({ exitCode: EXIT.usage, message: 'from: is empty' }));
    expect(() => runAllow(person(), { from: 'w1', to: 'w2', channel: 'a b' })).toThrow(expect.objectContaining({ exitCode: EXIT.usage, message: expect.stringMatching(/^channel: /) }));
    expect(() => runAllow(person(), { from: 'a|b', to: 'w2' })).toThrow(expect.objectContaining({ exitCode: EXIT.usage }));
    // A front end words the field its own way.
    expect(() => parseInput(grantInput, { from: 'w1', to: '' }, (p) => `<${p}>`)).toThrow(expect.objectContaining({ message: '<to>: is empty' }));
    expect(fileOrNone(policyPath())).toBeNull();
  });
});

describe('policy', () => {
  it('changes the mode and keeps the rest; grants reads the change back', () => {
    runAllow(person(), { from: 'w1', to: 'w2' });
    const r = runPolicy(person(), { mode: 'groups' });
    expect(r).toEqual({ file: policyPath(), policy: { ...DEFAULT_POLICY, mode: 'groups', allow: [{ from: 'w1', to: 'w2' }] } });
    expect(runPolicy(person(), { open: 'humans', maxDepth: 3 }).policy).toMatchObject({ mode: 'groups', open: 'humans', maxDepth: 3 });
    expect(runGrants(person()).policy).toMatchObject({ mode: 'groups', open: 'humans', maxDepth: 3, allow: [{ from: 'w1', to: 'w2' }] });
  });

  it.each([
    [{ mode: 'everyone' }, "mode: family or groups, not 'everyone'"],
    [{ open: 'nobody' }, "open: everyone, family, top, humans or granted, not 'nobody'"],
    [{ maxDepth: 0 }, 'maxDepth: at least 1'],
    [{ maxDepth: 65 }, 'maxDepth: at most 64'],
    [{ maxDepth: 1.5 }, 'maxDepth: a whole number'],
    [{ depth: 3 }, expect.stringMatching(/depth/)],
  ])('%j is refused before anything is written', (input, message) => {
    expect(() => runPolicy(person(), input as never)).toThrow(expect.objectContaining({ exitCode: EXIT.usage, message }));
    expect(() => parseInput(policyInput, input)).toThrow(expect.objectContaining({ exitCode: EXIT.usage }));
    expect(fileOrNone(policyPath())).toBeNull();
  });
});

describe('a malformed policy file', () => {
  it('is the bus’s error (exit 3) naming the file and line, for reading and for every change; it is never overwritten', () => {
    const ctx = person();
    ctx.root();
    const broken = '{\n  "version": 1,\n  "mode": "everyone"\n}\n';
    writeFileSync(policyPath(), broken);
    const named = expect.stringContaining(`${policyPath()}:3: mode: `);
    expect(() => runGrants(ctx)).toThrow(expect.objectContaining({ exitCode: EXIT.bus, message: named, hint: { text: `fix or remove ${policyPath()}` } }));
    expect(() => runPolicy(ctx, { mode: 'groups' })).toThrow(expect.objectContaining({ exitCode: EXIT.bus, message: named }));
    expect(() => runAllow(ctx, { from: 'w1', to: 'w2' })).toThrow(expect.objectContaining({ exitCode: EXIT.bus, message: named }));
    expect(readFileSync(policyPath(), 'utf8')).toBe(broken);
  });
});

describe('keys', () => {
  it('describe shows no key before the first; rotate makes one, then replaces it and keeps the old id published', () => {
    const none = runKeys(person());
    expect(none).toMatchObject({ node: ME, current: null, published: [] });
    expect(none.privateKey.startsWith(bus.root)).toBe(false);

    const first = runRotateKey(person());
    expect(first).toMatchObject({ node: ME, old: null, privateKey: none.privateKey });
    expect(statSync(first.privateKey).mode & 0o777).toBe(0o600);
    expect(runKeys(person())).toMatchObject({ current: first.current, published: [{ keyId: first.current, current: true }] });

    const second = runRotateKey(person());
    expect(second.old).toBe(first.current);
    expect(second.current).not.toBe(first.current);
    expect(runKeys(person()).published.map((k) => [k.keyId, k.current])).toEqual([
      [first.current, false],
      [second.current, true],
    ]);
  });

  it('an agent has keys of its own', () => {
    expect(runRotateKey(agent()).node).toMatch(/^codex@/);
    expect(runKeys(person()).current).toBeNull();
  });
});

describe('delegate', () => {
  it('is refused for an agent (exit 4) before its target is looked up, and nothing is written', () => {
    expect(() => runDelegate(agent(), { session: 'nobody-by-this-name' })).toThrow(
      expect.objectContaining({ exitCode: EXIT.refused, message: expect.stringMatching(/^only a person delegates; codex@\S+ is an agent$/) }),
    );
    expect(existsSync(join(bus.root, 'delegations'))).toBe(false);
  });

  it('checks the duration and the scopes (usage), and needs a live session', () => {
    expect(() => runDelegate(person(), { session: 'x', ttl: 'forever' })).toThrow(expect.objectContaining({ exitCode: EXIT.usage }));
    expect(() => runDelegate(person(), { session: 'x', scopes: ['a b'] })).toThrow(expect.objectContaining({ exitCode: EXIT.usage }));
    expect(() => runDelegate(person(), { session: 'x' })).toThrow(expect.objectContaining({ exitCode: EXIT.notFound }));
    expect(parseInput(delegateInput, { session: 'x' })).toEqual({ session: 'x', ttl: '2h', scopes: ['*'] });
  });
});

describe('lineage and cards', () => {
  it('a tree and cards over the live roster, and the caller’s own card, signed', async () => {
    expect(runTree(person())).toMatchObject({ tree: expect.any(Array), live: expect.any(Array) });
    expect(await runCards(person(), { version: '9.9.9' })).toHaveLength(runTree(person()).live.length);
    const card = await runWhoamiCard(person(), { version: '9.9.9' });
    expect(card).toMatchObject({ name: ME, version: '9.9.9', signatures: [expect.any(Object)] });
    expect(await runVerifyCard(person(), { text: JSON.stringify(card) })).toMatchObject({ ok: true, node: ME });
    await expect(runWhoamiCard(person(), { version: '' })).rejects.toMatchObject({ exitCode: EXIT.usage });
    await expect(runVerifyCard(person(), { text: 'not json' })).rejects.toMatchObject({ exitCode: EXIT.usage });
  });
});
