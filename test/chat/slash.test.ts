// Chat's channel slash commands on a real temporary bus, with real live sessions: they go
// through the channel command functions, so the shared rules hold in chat too (issue #3
// permissions, notices and the owed backlog; issue #5 §3 for the commands).

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readChannels } from '../../tools/bus/channels/membership.js';
import { readOwed } from '../../tools/bus/delivery/owed.js';
import { writePresence } from '../../tools/bus/presence/heartbeats.js';
import { listLive } from '../../tools/bus/presence/roster.js';
import { procInfo } from '../../tools/identity/system.js';
import { createChatActions } from '../../tools/chat/actions.js';
import { peerStatusText } from '../../tools/chat/peer-status.js';
import { keyHelpLines } from '../../tools/chat/keys.js';
import { errorLine, runSlash } from '../../tools/chat/slash.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { AttendError, EXIT, verbHint } from '../../tools/wire/errors.js';
import { attendKey } from '../../tools/wire/names.js';
import { type FakeSession, fakeSession, makeTempBus, runInProcess, seeLive, type TempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
let sessions: FakeSession[] = [];

beforeEach(() => {
  bus = makeTempBus();
  sessions = [];
});
afterEach(() => {
  for (const s of sessions) s.dispose();
  bus.cleanup();
});

function live(name: string): FakeSession {
  const s = fakeSession(bus, { name });
  sessions.push(s);
  return s;
}

function chat(tabChannel: string | null = null) {
  const makeCtx = () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: 'tester' });
  const root = makeCtx().root();
  writePresence(root, { id: 'tester', kind: 'human', origin: bus.home, heartbeat: Date.now(), pid: process.pid, role: 'chat' });
  const actions = createChatActions({ makeCtx, root, now: Date.now });
  return (line: string) => runSlash(line, { actions, tabChannel, replyTarget: () => undefined });
}

/** The signal lines in a directory, oldest first. */
function lines(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith('.signal'))
    .sort()
    .map((n) => readFileSync(join(dir, n), 'utf8'));
}

const tray = (s: FakeSession) => join(bus.root, 'signals', attendKey(s.cwd));

describe('chat channel commands share the channel rules', () => {
  it('/invite writes the shared invite notice, as the human, to the invitee tray', async () => {
    const nick = live('Nick');
    const run = chat();
    expect(run('/create #ops deploys').consumed).toBe(true);
    const out = run('/invite @nick #ops');
    expect(out.lines[0]).toEqual({ text: 'invited Nick to #ops (told)', level: 'info' });
    expect(readChannels(bus.root).channels.ops?.invites[nick.sessionId]?.by).toBe('tester');
    const notices = lines(tray(nick));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(`|from_kind:human|from_id:tester|to:${nick.sessionId}|urgency:quiet|invite: you are invited to #ops.`);
  });

  it('/join after an invite takes it up and owes the backlog', async () => {
    const nick = live('Nick');
    expect((await runInProcess(['join', 'ops'], { env: nick.env, user: 'tester' })).exitCode).toBe(0);
    for (let i = 0; i < 3; i++) expect((await runInProcess(['send', '--channel', 'ops', `before ${i}`], { env: nick.env, user: 'tester' })).exitCode).toBe(0);
    const run = chat();
    // The operator is live (chat heartbeat), so the agent can invite the human by username.
    expect((await runInProcess(['invite', 'tester', 'ops'], { env: nick.env, user: 'tester' })).exitCode).toBe(0);
    const out = run('/join #ops');
    expect(out.switchTo).toBe('#ops');
    expect(out.lines.map((l) => l.text)).toEqual(['joined #ops', `invited by ${nick.sessionId}: 3 earlier messages owed to you`]);
    expect(readOwed(bus.root, 'tester')[0]?.ids).toHaveLength(3);
    expect(readChannels(bus.root).channels.ops?.members.tester?.kind).toBe('human');
  });

  it('/dissolve is refused while another member is live, with the chat hint; --force dissolves and tells them', async () => {
    const nick = live('Nick');
    const run = chat('ops');
    run('/create #ops');
    expect((await runInProcess(['join', 'ops'], { env: nick.env, user: 'tester' })).exitCode).toBe(0);
    expect((await runInProcess(['send', '--channel', 'ops', 'in the room'], { env: nick.env, user: 'tester' })).exitCode).toBe(0);
    const refused = run('/dissolve');
    expect(refused.consumed).toBe(false);
    expect(refused.lines[0]?.level).toBe('error');
    expect(refused.lines[0]?.text).toBe('#ops has live members besides you: Nick (/dissolve #ops --force dissolves it anyway (they are told))');
    expect(readChannels(bus.root).channels.ops).toBeDefined();
    const done = run('/dissolve --force');
    expect(done.lines[0]?.text).toBe('dissolved #ops (1 message deleted, 1 member told)');
    expect(readChannels(bus.root).channels.ops).toBeUndefined();
    expect(existsSync(join(bus.root, 'signals', '@ops'))).toBe(false);
    expect(lines(tray(nick)).at(-1)).toContain(`|to:${nick.sessionId}|urgency:quiet|dissolve: #ops was dissolved`);
  });

  it('/kick removes a member and tells it; /leave #open is refused by the shared rule', async () => {
    const nick = live('Nick');
    const run = chat();
    run('/create #ops');
    expect((await runInProcess(['join', 'ops'], { env: nick.env, user: 'tester' })).exitCode).toBe(0);
    expect(run('/kick @Nick #ops').lines[0]?.text).toBe('removed Nick from #ops (told)');
    expect(readChannels(bus.root).channels.ops?.members[nick.sessionId]).toBeUndefined();
    expect(lines(tray(nick)).at(-1)).toContain(`|to:${nick.sessionId}|urgency:quiet|kick: you were removed from #ops.`);
    const open = run('/leave #open');
    expect(open).toMatchObject({ consumed: false, lines: [{ text: '#open is the commons: it cannot be left', level: 'error' }] });
    const notMember = run('/leave #nowhere');
    expect(notMember.lines[0]?.text).toMatch(/^no channel #nowhere \(channels: #ops\)$/);
  });

  it('an invalid channel name is refused before anything is written', () => {
    const run = chat();
    const out = run('/join #../../etc');
    expect(out.consumed).toBe(false);
    expect(out.lines[0]?.level).toBe('error');
    expect(readChannels(bus.root).channels).toEqual({});
  });
});

describe('error lines and peer status', () => {
  it('words hints as slash commands, keeps plain advice, and leaves other errors alone', () => {
    expect(errorLine(new AttendError('x', EXIT.notFound, verbHint('join', [['channel', 'ops']])))).toBe('x (/join #ops)');
    expect(errorLine(new AttendError('y', EXIT.notFound, verbHint('channels', [], { flags: ['joined'], then: 'lists yours' })))).toBe('y (/channels lists yours)');
    // A verb with no slash form keeps the CLI line; plain advice stays as it is.
    expect(errorLine(new AttendError('z', EXIT.notFound, verbHint('inbox', [], { then: 'lists message ids' })))).toBe('z (attend inbox lists message ids)');
    expect(errorLine(new AttendError('w', EXIT.usage, 'use a session id'))).toBe('w (use a session id)');
    expect(errorLine(new Error('disk on fire'))).toBe('disk on fire');
  });

  it('marks an agent waiting when no conduit of it is live, never deaf (issue 21 item 7)', () => {
    const sensed = live('Sensed');
    const deaf = live('Deaf');
    writePresence(bus.root, { id: sensed.sessionId, kind: 'agent', origin: sensed.cwd, heartbeat: Date.now(), role: 'sensor', pid: sensed.pid });
    const peers = listLive({ root: bus.root, sessionsDir: join(bus.claudeDir, 'sessions'), now: Date.now(), procInfo });
    const by = (id: string) => peers.find((p) => p.id === id);
    expect(peerStatusText(by(sensed.sessionId)!)).toBe('idle');
    expect(peerStatusText(by(deaf.sessionId)!)).toBe('idle, waiting');
  });
});

describe('one key table for every help text', () => {
  it('`attend chat --help` and /help list every row of the key table', async () => {
    const r = await runInProcess(['chat', '--help'], { env: bus.env });
    expect(r.exitCode).toBe(0);
    const help = runSlash('/help', { actions: createChatActions({ makeCtx: () => createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, identity: 'human', userName: 'tester' }), root: bus.root, now: Date.now }), tabChannel: null, replyTarget: () => undefined });
    for (const line of keyHelpLines()) {
      expect(r.stdout).toContain(`  ${line}\n`);
      expect(help.lines.map((l) => l.text)).toContain(line);
    }
  });
});

describe('names in slash commands follow the send rule (issue 10 item 13)', () => {
  it('/whois takes an exact name or a unique prefix, and only suggests a typo', () => {
    live('Hana');
    const run = chat();
    expect(run('/whois @han').lines[0]?.text).toMatch(/^Hana \(agent\)/);
    const typo = run('/whois @hanna');
    expect(typo.consumed).toBe(false);
    expect(typo.lines[0]).toEqual({ text: 'nobody called @hanna; did you mean @Hana?', level: 'error' });
  });
  it('a human and an agent with the same name are ambiguous; @human:<user> names the person (issue 10 item 10)', () => {
    const agent = live('alpha');
    // The agent was named before the person came: it keeps its name, so the two share it.
    seeLive(bus);
    writePresence(bus.root, { id: 'alpha', kind: 'human', origin: '/home/alpha', heartbeat: Date.now(), pid: process.pid, role: 'chat' });
    const run = chat();
    const amb = run('/whois @alpha');
    expect(amb.consumed).toBe(false);
    expect(amb.lines[0]?.text).toContain(`@alpha is ambiguous: alpha (${agent.sessionId}), alpha (alpha)`);
    expect(run('/whois @human:alpha').lines[0]?.text).toMatch(/^alpha \(human\) · id alpha/);
    expect(run(`/whois @${agent.sessionId}`).lines[0]?.text).toMatch(/^alpha \(agent\)/);
  });
});

describe('chat file claims (issue 23 §2)', () => {
  it('/claim, /claims and /release go through the claim verbs, as the person', () => {
    const run = chat();
    const file = join(bus.home, 'notes.md');
    const made = run(`/claim ${file} --ttl 30m --reason rewriting the notes`);
    expect(made.lines.map((l) => l.level)).toEqual(['info']);
    expect(made.lines[0]?.text).toContain(`claimed ${file.slice(1)}`);
    expect(run('/claims').lines.map((l) => l.text)).toEqual([`${file.slice(1)} in /: you — rewriting the notes`]);
    expect(run('/claim').lines[0]).toMatchObject({ level: 'error' });
    expect(run(`/release ${file}`).lines[0]?.text).toBe(`released ${file.slice(1)}`);
    expect(run('/claims').lines[0]?.text).toBe('no claims hold');
  });
});

describe('/search (issue 23 §4)', () => {
  it('lists the hits the person may see, one line each, hostile text neutralized', async () => {
    const nick = live('Nick');
    const sent = await runInProcess(['send', 'the otter \u001b[2J is back'], { env: nick.env, user: 'tester' });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const id = sent.stdout.trim();
    const run = chat();
    const out = run('/search otter');
    expect(out.consumed).toBe(true);
    expect(out.lines[0]?.text).toBe('1 match for otter:');
    expect(out.lines[1]?.text).toContain(id);
    expect(out.lines[1]?.text).toContain('#open');
    expect(out.lines.map((l) => l.text).join('')).not.toContain('\u001b');
    expect(run('/search beaver').lines).toEqual([{ text: 'no matches for beaver', level: 'info' }]);
    expect(run('/search').lines[0]?.level).toBe('error');
  });
});
