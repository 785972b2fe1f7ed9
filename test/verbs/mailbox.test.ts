// Issue 21 item 1: a mailbox for every party the bus has known. In-process over a temporary
// bus; declared agents (ATTEND_AGENT, ATTEND_AGENT_ID) are identities without processes.

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rememberParties } from '../../tools/bus/presence/names.js';
import { reachOf } from '../../tools/bus/presence/reach.js';
import { reachText } from '../../tools/wire/display.js';
import { type TempBus, ME, declaredAgent, runInProcess, useFamilyPolicy, useTempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const agent = (id: string) => declaredAgent(bus, id);

describe('a mailbox for every party the bus has known (issue 21 item 1)', () => {
  it('an agent leaves the person a message while they are not in chat; attend inbox shows it', async () => {
    const a = agent('c1');
    const sent = await runInProcess(['send', '--to', ME, 'the build is green'], a);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stderr).toBe(`attend: waits for ${ME}, never seen live\n`);
    const inbox = await runInProcess(['inbox'], { env: bus.env });
    expect(inbox.exitCode, inbox.stderr).toBe(0);
    expect(inbox.stdout).toContain('the build is green');
  });

  it('the person answers a declared agent that has only ever sent; its next drain delivers it', async () => {
    const a = agent('c2');
    // To the person: every node reaches the person, and #open is not a declared agent's (issue 20).
    expect((await runInProcess(['send', '--to', ME, 'anyone there?'], a)).exitCode).toBe(0);
    const reply = await runInProcess(['send', '--to', 'codex-c2', 'yes, here', '--json'], { env: bus.env });
    expect(reply.exitCode, reply.stderr).toBe(0);
    expect(JSON.parse(reply.stdout).delivery).toEqual([{ id: `codex.c2@${ME}`, name: 'codex-c2 (gone)', kind: 'agent', reach: { word: 'waiting', since: expect.any(Number) } }]);
    expect(reply.stderr).toMatch(/^attend: waits for codex-c2 \(gone\), last seen \d+s ago\n$/);
    const drain = await runInProcess(['inbox', '--drain', '--format', 'plain'], a);
    expect(drain.exitCode, drain.stderr).toBe(0);
    expect(drain.stdout).toContain('yes, here');
  });

  it('an unknown name still fails, with the closest known names', async () => {
    expect((await runInProcess(['send', '--to', ME, 'hello'], agent('c3'))).exitCode).toBe(0);
    const r = await runInProcess(['send', '--to', 'codex-c4', 'x'], { env: bus.env });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe("attend: no known recipient 'codex-c4'; closest: codex-c3 (gone); nobody is live on this bus\n");
  });

  it('two gone parties of one name are ambiguous, with the candidates; a live one of that name wins', async () => {
    const now = Date.now();
    // The first ended long before the second was called by the same name.
    rememberParties(bus.root, [{ id: '11111111-1111-4111-8111-111111111111', kind: 'agent', name: 'api', origin: join(bus.dir, 'a') }], now - 3_600_000);
    rememberParties(bus.root, [{ id: '22222222-2222-4222-8222-222222222222', kind: 'agent', name: 'api', origin: join(bus.dir, 'b') }], now);
    const r = await runInProcess(['send', '--to', 'api', 'x'], { env: bus.env });
    expect(r.exitCode).toBe(2);
    // Newest seen first.
    expect(r.stderr).toContain("'api' is ambiguous: api (agent, 22222222-2222-4222-8222-222222222222), api (agent, 11111111-1111-4111-8111-111111111111)");
    // By id, either is reached.
    expect((await runInProcess(['send', '--to', '22222222-2222-4222-8222-222222222222', 'x'], { env: bus.env })).exitCode).toBe(0);
  });
});

describe("the person's mail, read from another directory (issue 21 item 2)", () => {
  it('attend inbox from anywhere lists the mail for the person in a project tray, and none of the sessions\' own mail there', async () => {
    // The person last spoke from the project: mail for them waits in its tray.
    const proj = join(bus.dir, 'work', 'proj');
    const elsewhere = join(bus.dir, 'elsewhere');
    mkdirSync(proj, { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    expect((await runInProcess(['send', 'back after lunch'], { env: bus.env, cwd: proj })).exitCode).toBe(0);
    const a = agent('d1');
    // Declared agents have no lineage, so no group: they talk here under family (issue 20).
    useFamilyPolicy(bus);
    // Two agents of the project: mail between them in its tray is theirs, not the person's.
    const [p1, p2] = ['p1', 'p2'].map((id) => ({ env: { ...agent(id).env }, cwd: proj }));
    expect((await runInProcess(['send', 'hello'], p2!)).exitCode).toBe(0);
    const side = await runInProcess(['send', '--to', `codex.p2@${ME}`, 'between us agents', '--json'], p1!);
    expect(side.exitCode, side.stderr).toBe(0);
    const asked = await runInProcess(['send', '--to', ME, 'may I drop the old table?', '--json'], a);
    expect(asked.exitCode, asked.stderr).toBe(0);
    // Both in the project's tray.
    expect(dirname(JSON.parse(asked.stdout).files[0])).toBe(dirname(JSON.parse(side.stdout).files[0]));

    for (const cwd of [elsewhere, bus.home, proj]) {
      const inbox = await runInProcess(['inbox', '--json'], { env: bus.env, cwd });
      expect(inbox.exitCode, inbox.stderr).toBe(0);
      const page = JSON.parse(inbox.stdout) as { messages: { body: string }[]; total: number };
      const bodies = page.messages.map((m) => m.body);
      expect(bodies, cwd).toContain('may I drop the old table?');
      expect(bodies, cwd).not.toContain('between us agents');
      expect(page.total, cwd).toBe(page.messages.length);
    }
    const status = await runInProcess(['status', '--json'], { env: bus.env, cwd: elsewhere });
    const inbox = JSON.parse((await runInProcess(['inbox', '--json'], { env: bus.env, cwd: elsewhere })).stdout) as { total: number };
    expect(JSON.parse(status.stdout).inbox.total).toBe(inbox.total);
    // A session's inbox is still its receive set by the tray's rule: the person's mail there is not its.
    const theirs = await runInProcess(['inbox', '--json'], p2!);
    expect((JSON.parse(theirs.stdout) as { messages: { body: string }[] }).messages.map((m) => m.body)).not.toContain('may I drop the old table?');
  });
});

describe('the four words (issue 21 item 7)', () => {
  const now = 1_000_000_000;
  const d = (o: Partial<{ sensor: number; drain: number; chat: number; hook: number; deliverer: number }>) => ({ sensor: null, drain: null, chat: null, hook: null, deliverer: null, delivering: false, ...o });
  const record = { pid: 1, sessionId: 's', cwd: '/x' } as never;
  it.each([
    ['a live sensor', { kind: 'agent', lastSeen: now, record, delivery: d({ sensor: now - 1000 }) }, 'shown (sensor)'],
    ['a live deliverer', { kind: 'agent', lastSeen: now, record, delivery: d({ sensor: now - 1000, deliverer: now - 1000 }) }, 'shown (deliverer)'],
    ['an open chat', { kind: 'human', lastSeen: now, delivery: d({ chat: now - 1000 }) }, 'shown (chat)'],
    ['a fresh session with only its Stop hook', { kind: 'agent', lastSeen: now, record, delivery: d({ hook: now - 60_000 }) }, 'at its next turn'],
    ['a session that drained an hour ago', { kind: 'agent', lastSeen: now, record, delivery: d({ drain: now - 3_600_000 }) }, 'at its next turn'],
    ['a live session with no conduit', { kind: 'agent', lastSeen: now, record, delivery: d({}) }, 'waiting, live, no conduit running'],
    ['a gone session', { kind: 'agent', lastSeen: now - 7_200_000, gone: true }, 'waiting, last seen 2h ago'],
    ['a gone party of another machine', { kind: 'agent', lastSeen: now, host: 'box', gone: true }, 'held by the hub until box is back'],
    ['a member of another machine its sensor shows', { kind: 'agent', lastSeen: now, host: 'box', reach: { word: 'shown', by: 'sensor' } }, 'shown (sensor on box)'],
  ] as const)('%s', (_what, peer, text) => {
    expect(reachText(reachOf(peer as never, now), now)).toBe(text);
  });
});
