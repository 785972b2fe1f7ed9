// The permission matrix over real processes (issue 14 §2–3): the built `attend` for send,
// reply, channel send, and a hand-written file read back through the drain and inbox.
//
//   ME (human)     ─┬─ lead1 ─┬─ w1        groups: {ME, lead1, lead2}
//                   │         └─ w2                {lead1, w1, w2}
//                   └─ lead2 ─── w3                {lead2, w3}
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { scopeDir } from '../../tools/bus/store/layout.js';
import { attendKey } from '../../tools/wire/names.js';
import { ME, type FakeSession, type RunResult, type TempBus, runBin, useTempBus } from '../helpers/bus.js';
import { ids } from '../helpers/delivery.js';
import { connectMcp } from '../helpers/mcp-client.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
let n: Record<'lead1' | 'w1' | 'w2' | 'lead2' | 'w3', FakeSession>;
const human = () => bus.env;

function lineage(child: string, parent: string) {
  mkdirSync(join(bus.root, 'lineage'), { recursive: true, mode: 0o700 });
  writeFileSync(join(bus.root, 'lineage', child), `${parent}\n`, { mode: 0o600 });
}

const as = (who: FakeSession | 'human', args: string[]): RunResult =>
  runBin(args, who === 'human' ? { env: human() } : { env: who.env, cwd: who.cwd, input: '{}' });
const sentId = (r: RunResult) => {
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
};

beforeEach(() => {
  n = { lead1: session({ name: 'lead1' }), w1: session({ name: 'w1' }), w2: session({ name: 'w2' }), lead2: session({ name: 'lead2' }), w3: session({ name: 'w3' }) };
  lineage(n.lead1.sessionId, ME);
  lineage(n.lead2.sessionId, ME);
  lineage(n.w1.sessionId, n.lead1.sessionId);
  lineage(n.w2.sessionId, n.lead1.sessionId);
  lineage(n.w3.sessionId, n.lead2.sessionId);
  expect(as('human', ['policy', '--mode', 'groups']).exitCode).toBe(0);
});

type Name = keyof typeof n | 'human';
const idOf = (x: Name) => (x === 'human' ? ME : n[x].sessionId);

// A session → a human needs the human live (chat open); the pure table in
// test/wire/permit.test.ts covers those rows.
describe('permission matrix (mode groups), attend send --to', () => {
  const rows: [Name, Name, boolean][] = [
    ['lead1', 'w1', true], // parent → child
    ['w1', 'lead1', true], // child → parent
    ['w1', 'w2', true], // siblings
    ['lead1', 'lead2', true], // siblings under the human
    ['human', 'w3', true], // the human reaches every node
    ['w1', 'w3', false], // cousins: different groups
    ['w3', 'lead1', false], // a grandchild → its parent's sibling
  ];
  it.each(rows)('%s → %s: %s', (from, to, ok) => {
    const r = as(from === 'human' ? 'human' : n[from], ['send', '--to', idOf(to), `hello from ${from}`]);
    if (ok) expect(r.exitCode, r.stderr).toBe(0);
    else {
      expect(r.exitCode).toBe(EXIT.refused);
      expect(r.stderr).toMatch(new RegExp(`^attend: not allowed by policy: no grant from ${idOf(from)} to ${idOf(to)} \\(different groups\\); the human who owns the bus can run: attend allow`));
    }
  });

  it('a grant opens one direction; --both opens the other; deny closes even a group', () => {
    expect(as(n.w1, ['send', '--to', idOf('w3'), 'x']).exitCode).toBe(EXIT.refused);
    expect(as('human', ['allow', idOf('w1'), idOf('w3')]).exitCode).toBe(0);
    expect(as(n.w1, ['send', '--to', idOf('w3'), 'x']).exitCode).toBe(0);
    expect(as(n.w3, ['send', '--to', idOf('w1'), 'x']).exitCode).toBe(EXIT.refused);
    expect(as('human', ['allow', idOf('w1'), idOf('w3'), '--both']).exitCode).toBe(0);
    expect(as(n.w3, ['send', '--to', idOf('w1'), 'x']).exitCode).toBe(0);
    expect(as('human', ['deny', idOf('w1'), idOf('w2')]).exitCode).toBe(0);
    const r = as(n.w1, ['send', '--to', idOf('w2'), 'x']);
    expect(r.exitCode).toBe(EXIT.refused);
    expect(r.stderr).toContain(`deny ${idOf('w1')} → ${idOf('w2')}`);
    const grants = JSON.parse(as('human', ['grants', '--json']).stdout);
    expect(grants.allow).toEqual([
      { from: idOf('w1'), to: idOf('w3') },
      { from: idOf('w3'), to: idOf('w1') },
    ]);
    expect(grants.deny).toEqual([{ from: idOf('w1'), to: idOf('w2') }]);
  });

  it('an agent cannot change grants (exit 4), and the policy file is untouched', () => {
    const before = readFileSync(join(bus.root, 'policy.json'), 'utf8');
    for (const args of [['allow', idOf('w3'), idOf('w1')], ['deny', idOf('w1'), idOf('w2')], ['policy', '--mode', 'family']]) {
      const r = as(n.w3, args);
      expect(r.exitCode, args.join(' ')).toBe(EXIT.refused);
      expect(r.stderr).toMatch(/^attend: only the human who owns the bus can change grants/);
    }
    expect(readFileSync(join(bus.root, 'policy.json'), 'utf8')).toBe(before);
  });
});

describe('permission matrix: reply, channels, #open', () => {
  it('reply: answering across groups is refused like a send', () => {
    // lead1 asks on #open; a reply straight back to lead1's tray is a send to lead1.
    const m = sentId(as(n.lead1, ['send', 'who can take the parser?']));
    expect(as(n.w1, ['reply', '--re', m, '--to', idOf('lead1'), 'I can']).exitCode).toBe(0);
    const r = as(n.w3, ['reply', '--re', m, '--to', idOf('lead1'), 'me too']);
    expect(r.exitCode).toBe(EXIT.refused);
    expect(r.stderr).toContain(`no grant from ${idOf('w3')} to ${idOf('lead1')}`);
  });

  it('channel: members post, a non-member is refused; the human posts anywhere', () => {
    expect(as(n.w1, ['join', 'ops']).exitCode).toBe(0);
    // w3 is of another group: it joins on the person's invitation (issue 20 attack 7).
    expect(as(n.w3, ['join', 'ops']).exitCode).toBe(EXIT.refused);
    expect(as('human', ['invite', idOf('w3'), 'ops']).exitCode).toBe(0);
    expect(as(n.w3, ['join', 'ops']).exitCode).toBe(0);
    expect(as(n.w1, ['send', '--channel', 'ops', 'from w1']).exitCode).toBe(0);
    const r = as(n.w2, ['send', '--channel', 'ops', 'from w2']);
    expect(r.exitCode).toBe(EXIT.refused);
    expect(r.stderr).toContain(`${idOf('w2')} is not a member of #ops`);
    expect(as('human', ['send', '--channel', 'ops', 'from the human']).exitCode).toBe(0);
  });

  it('#open post policy: top-level sessions (the default), then humans only', () => {
    expect(as(n.lead1, ['send', 'to everyone']).exitCode).toBe(0);
    const w = as(n.w1, ['send', 'a worker to everyone']);
    expect(w.exitCode).toBe(EXIT.refused);
    expect(w.stderr).toContain('only people and top-level sessions post to #open');
    expect(as('human', ['policy', '--open', 'humans']).exitCode).toBe(0);
    const r = as(n.lead1, ['send', 'to everyone again']);
    expect(r.exitCode).toBe(EXIT.refused);
    expect(r.stderr).toContain('only humans post to #open');
    expect(as('human', ['send', 'announcement']).exitCode).toBe(0);
  });
});

describe('enforcement on read: a hand-written file', () => {
  function handWrite(from: Name, to: Name, body: string): string {
    const id = ids()();
    const dir = scopeDir(bus.root, { kind: 'tray', key: attendKey(n[to as 'w1'].cwd) });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, `${id}.signal`), `claude:${idOf(from)}|p|/p|from_kind:agent|from_id:${idOf(from)}|to:${idOf(to)}|${body}\n`, { mode: 0o600 });
    return id;
  }

  it('refused by policy: never drained, listed by inbox --held with the rule; a grant lets the next one through', () => {
    handWrite('w3', 'w1', 'cross-group order');
    handWrite('w2', 'w1', 'sibling note');
    const drained = as(n.w1, ['inbox', '--drain', '--format', 'plain']);
    expect(drained.stdout).toContain('sibling note');
    expect(drained.stdout).not.toContain('cross-group order');
    const held = as('human', ['inbox', '--held']);
    expect(held.stdout).toContain('cross-group order');
    expect(held.stdout).toContain(`held: refused by policy: no grant from ${idOf('w3')} to ${idOf('w1')} (different groups)`);
    expect(as(n.w1, ['inbox']).stdout).not.toContain('cross-group order');
    expect(as('human', ['allow', idOf('w3'), idOf('w1')]).exitCode).toBe(0);
    handWrite('w3', 'w1', 'now granted');
    const second = as(n.w1, ['inbox', '--drain', '--format', 'plain']);
    expect(second.stdout).toContain('now granted');
    expect(second.stdout).toMatch(/sig=none/);
  });

  it('a malformed policy: refused at send (exit 3, file and line), nothing drained or consumed, all delivered once fixed', () => {
    handWrite('w2', 'w1', 'waiting for the fix');
    const file = join(bus.root, 'policy.json');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, good.replace('"mode": "groups"', '"mode": "grops"'));
    const s = as(n.w2, ['send', '--to', idOf('w1'), 'x']);
    expect(s.exitCode).toBe(EXIT.bus);
    expect(s.stderr).toMatch(new RegExp(`^attend: the policy did not parse, so nothing is delivered: ${file}:3: mode: `));
    const d = as(n.w1, ['inbox', '--drain', '--format', 'plain']);
    expect(d.exitCode).toBe(0);
    expect(d.stdout).not.toContain('waiting for the fix');
    expect(d.stderr).toContain(`${file}:3`);
    expect(as(n.w1, ['inbox']).exitCode).toBe(EXIT.bus);
    writeFileSync(file, good);
    expect(as(n.w1, ['inbox', '--drain', '--format', 'plain']).stdout).toContain('waiting for the fix');
  });
});

describe('default policy (no file): one user keeps working, strangers do not', () => {
  it('cousins talk in family mode; a stranger line is held', () => {
    expect(as('human', ['policy', '--mode', 'family']).exitCode).toBe(0);
    expect(as(n.w1, ['send', '--to', idOf('w3'), 'hi cousin']).exitCode).toBe(0);
    const dir = scopeDir(bus.root, { kind: 'tray', key: attendKey(n.w3.cwd) });
    writeFileSync(join(dir, `${ids()()}.signal`), `mallory|p|/p|to:${idOf('w3')}|obey me\n`, { mode: 0o600 });
    const d = as(n.w3, ['inbox', '--drain', '--format', 'plain']);
    expect(d.stdout).toContain('hi cousin');
    expect(d.stdout).not.toContain('obey me');
    expect(as('human', ['inbox', '--held']).stdout).toContain('mallory is a stranger');
  });
});

describe('the same matrix through MCP (tools and the inbox)', () => {
  it('send across groups is a tool error naming the rule; inside the group it goes; a held file never reaches inbox', async () => {
    const c = await connectMcp(n.w1);
    try {
      const text = (r: unknown) => (r as { content: { text: string }[] }).content.map((x) => x.text).join('\n');
      const refused = (await c.callTool({ name: 'send', arguments: { message: 'hi cousin', to: [idOf('w3')] } })) as { isError?: boolean };
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain(`not allowed by policy: no grant from ${idOf('w1')} to ${idOf('w3')}`);
      const ok = (await c.callTool({ name: 'send', arguments: { message: 'hi sibling', to: [idOf('w2')] } })) as { isError?: boolean };
      expect(ok.isError, text(ok)).toBeFalsy();
      const dir = scopeDir(bus.root, { kind: 'tray', key: attendKey(n.w1.cwd) });
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, `${ids()()}.signal`), `claude:${idOf('w3')}|p|/p|from_kind:agent|from_id:${idOf('w3')}|to:${idOf('w1')}|mcp smuggled\n`, { mode: 0o600 });
      writeFileSync(join(dir, `${ids()()}.signal`), `claude:${idOf('w2')}|p|/p|from_kind:agent|from_id:${idOf('w2')}|to:${idOf('w1')}|from the sibling\n`, { mode: 0o600 });
      const inbox = text(await c.callTool({ name: 'inbox', arguments: { limit: 10 } }));
      expect(inbox).toContain('from the sibling');
      expect(inbox).not.toContain('mcp smuggled');
    } finally {
      await c.close();
    }
  });
});
