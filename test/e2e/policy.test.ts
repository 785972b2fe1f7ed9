// The policy file (issue 14 §2): zod-validated, errors name the file and line, writes keep
// one grant per line, only a human changes it; lineage and A2A cards.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentCard } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { groupOf, lineageForest, recordParent } from '../../tools/bus/trust/lineage.js';
import { allow, deny, formatPolicy, parsePolicy, policyFile, readPolicy, updatePolicy } from '../../tools/bus/trust/policy.js';
import { DEFAULT_POLICY } from '../../tools/wire/permit.js';
import { BIN, ME, type TempBus, runBin, useTempBus } from '../helpers/bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
const HUMAN = { kind: 'human' as const, id: 'aaron' };

describe('policy file', () => {
  it('no file: the default policy', () => {
    expect(readPolicy(bus.root)).toEqual({ ok: true, exists: false, policy: DEFAULT_POLICY });
  });

  it.each([
    ['trailing comma', '{\n  "version": 1,\n  "allow": [\n    {"from": "a", "to": "b"},\n  ]\n}\n', /:5: not valid JSON/],
    ['unknown mode', '{\n  "version": 1,\n  "mode": "everyone"\n}\n', /:3: mode: /],
    ['grant without to', '{\n  "version": 1,\n  "allow": [\n    {"from": "a", "to": "b"},\n    {"from": "c"}\n  ]\n}\n', /:5: allow\.1\.to: /],
    ['a pipe in an id', '{\n  "version": 1,\n  "deny": [\n    {"from": "a|b", "to": "c"}\n  ]\n}\n', /:4: deny\.0\.from: /],
    ['unknown key', '{\n  "version": 1,\n  "moode": "groups"\n}\n', /:1: .*moode/],
    ['wrong version', '{\n  "version": 2\n}\n', /:2: version: /],
    ['not an object', '[]\n', /:1: /],
  ])('%s: names the file and the line', (_name, text, re) => {
    const r = parsePolicy(text, '/bus/policy.json');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.startsWith('/bus/policy.json:')).toBe(true);
      expect(r.error).toMatch(re);
    }
  });

  it('round-trips what it writes, one grant per line', () => {
    const p = allow(bus.root, HUMAN, { from: 'a', to: 'b', both: true, channel: 'ops' });
    deny(bus.root, HUMAN, { from: 'c', to: 'd' });
    const text = readFileSync(policyFile(bus.root), 'utf8');
    expect(text).toBe(formatPolicy({ ...p, deny: [{ from: 'c', to: 'd' }] }));
    expect(text.split('\n').filter((l) => l.includes('"from"'))).toHaveLength(3);
    expect(readPolicy(bus.root)).toMatchObject({ ok: true, exists: true, policy: { allow: [{ from: 'a', to: 'b', channel: 'ops' }, { from: 'b', to: 'a', channel: 'ops' }] } });
  });

  it('allow lifts a matching deny and deny removes a matching grant', () => {
    deny(bus.root, HUMAN, { from: 'a', to: 'b' });
    expect(allow(bus.root, HUMAN, { from: 'a', to: 'b' })).toMatchObject({ allow: [{ from: 'a', to: 'b' }], deny: [] });
    expect(deny(bus.root, HUMAN, { from: 'a', to: 'b' })).toMatchObject({ allow: [], deny: [{ from: 'a', to: 'b' }] });
  });

  it('an agent cannot change it; a broken file is never overwritten', () => {
    mkdirSync(bus.root, { recursive: true, mode: 0o700 });
    expect(() => allow(bus.root, { kind: 'agent', id: 'sid-1' }, { from: 'sid-1', to: 'x' })).toThrow(expect.objectContaining({ exitCode: EXIT.refused }));
    writeFileSync(policyFile(bus.root), '{ "version": 1, ');
    expect(() => updatePolicy(bus.root, HUMAN, () => {})).toThrow(expect.objectContaining({ exitCode: EXIT.bus }));
    expect(readFileSync(policyFile(bus.root), 'utf8')).toBe('{ "version": 1, ');
  });
});

describe('lineage', () => {
  it('groups and a four-level forest from recorded parents', () => {
    recordParent(bus.root, 'lead', 'aaron');
    recordParent(bus.root, 'w1', 'lead');
    recordParent(bus.root, 'w2', 'lead');
    recordParent(bus.root, 'w1a', 'w1');
    recordParent(bus.root, 'w1b', 'w1a');
    recordParent(bus.root, 'w1', 'someone-else'); // a parent, once recorded, does not change
    expect(groupOf(bus.root, 'w1')).toEqual({ parent: 'lead', children: ['w1a'], siblings: ['w2'] });
    const forest = lineageForest(bus.root, ['w1b', 'w2']);
    expect(JSON.stringify(forest)).toBe(
      JSON.stringify([{ id: 'aaron', children: [{ id: 'lead', children: [{ id: 'w1', children: [{ id: 'w1a', children: [{ id: 'w1b', children: [] }] }] }, { id: 'w2', children: [] }] }] }]),
    );
  });

  it('a session started by another session (a real process tree) is recorded as its child; whoami and peers --tree show it', () => {
    const parentSid = '11111111-0000-4000-8000-00000000aaaa';
    const childSid = '22222222-0000-4000-8000-00000000bbbb';
    const cwd = join(bus.dir, 'work', 'tree');
    mkdirSync(cwd, { recursive: true });
    // P (a session) starts C (a session, through a shell), C runs `attend whoami --json`.
    const child = `
      const { readFileSync, writeFileSync } = require('node:fs');
      const { spawnSync } = require('node:child_process');
      const st = (p) => { const s = readFileSync('/proc/' + p + '/stat', 'utf8'); return s.slice(s.lastIndexOf(')') + 2).split(' ')[19]; };
      writeFileSync(process.env.CLAUDE_CONFIG_DIR + '/sessions/' + process.pid + '.json', JSON.stringify({ pid: process.pid, sessionId: '${childSid}', cwd: ${JSON.stringify(cwd)}, procStart: st(process.pid), status: 'busy' }));
      const r = spawnSync(process.execPath, [process.env.ATTEND_BIN, 'whoami', '--json'], { encoding: 'utf8', cwd: ${JSON.stringify(cwd)}, env: { ...process.env, CLAUDE_PID: String(process.pid), CLAUDE_CODE_SESSION_ID: '${childSid}' } });
      process.stdout.write(r.stdout);
    `;
    const parent = `
      const { readFileSync, writeFileSync } = require('node:fs');
      const { spawnSync } = require('node:child_process');
      const s = readFileSync('/proc/self/stat', 'utf8');
      writeFileSync(process.env.CLAUDE_CONFIG_DIR + '/sessions/' + process.pid + '.json', JSON.stringify({ pid: process.pid, sessionId: '${parentSid}', cwd: ${JSON.stringify(cwd)}, procStart: s.slice(s.lastIndexOf(')') + 2).split(' ')[19], status: 'busy' }));
      const r = spawnSync('sh', ['-c', 'node -e "$CHILD"; exit $?'], { encoding: 'utf8', env: { ...process.env, CHILD: ${JSON.stringify(child)} } });
      process.stdout.write(r.stdout);
    `;
    const env = { ...bus.env, ATTEND_BIN: BIN, PATH: `${process.execPath.replace(/\/node$/, '')}:${bus.env.PATH}` };
    const r = spawnSync(process.execPath, ['-e', parent], { env, encoding: 'utf8' });
    const who = JSON.parse(r.stdout) as { id: string; parent: string; group: { parent: string } };
    expect(who.id).toBe(childSid);
    expect(who.parent).toBe(parentSid);
    expect(readFileSync(join(bus.root, 'lineage', childSid), 'utf8')).toBe(`${parentSid}\n`);
  });

  it('a session started from a terminal is the human’s child', () => {
    const s = session();
    const who = JSON.parse(runBin(['whoami', '--json'], { env: s.env }).stdout);
    expect(who.parent).toBe(ME);
  });
});

describe('A2A cards', () => {
  it('whoami --card and peers --cards are valid AgentCards (the SDK codec round-trips them) with the public key', () => {
    const s = session({ name: 'api' });
    expect(runBin(['send', 'hi'], { env: s.env }).exitCode).toBe(0);
    const card = JSON.parse(runBin(['whoami', '--card'], { env: s.env }).stdout);
    // Every field we set is read back by the SDK's own codec (its JSON drops empty defaults).
    expect(AgentCard.toJSON(AgentCard.fromJSON(card))).toEqual(AgentCard.toJSON(card));
    expect(card.name).toBe('api');
    const ext = card.capabilities.extensions[0];
    expect(ext.params).toMatchObject({ id: s.sessionId, node_kind: 'claude-code', current_key: expect.stringMatching(/^U[A-Z2-7]{55}$/) });
    const human = JSON.parse(runBin(['whoami', '--card'], { env: bus.env }).stdout);
    expect(human.capabilities.extensions[0].params.node_kind).toBe('external');
    const cards = JSON.parse(runBin(['peers', '--cards'], { env: s.env }).stdout);
    expect(cards.map((c: { name: string }) => c.name)).toContain('api');
    for (const c of cards) expect(AgentCard.toJSON(AgentCard.fromJSON(c))).toEqual(AgentCard.toJSON(c));
  });

});
