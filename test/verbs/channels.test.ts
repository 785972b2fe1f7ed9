// Channels (issue #3 §1–§3) against a real temporary bus, through the CLI in-process.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readChannels } from '../../tools/bus/channels/membership.js';
import { readOwed } from '../../tools/bus/delivery/owed.js';
import { processAlive } from '../../tools/identity/system.js';
import { attendKey } from '../../tools/wire/names.js';
import { type TempBus, runInProcess, seeLive, waitFor, useTempBus } from '../helpers/temp-bus.js';
import { signalsIn } from '../helpers/signals.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));


// Two people on one bus exist only in-process: outside, the person is the user the process
// runs as (issue 14 §6), and no variable renames it. The sessions here are aaron's: their
// processes run as aaron, so aaron is their parent (issue 20: the one person of the bus).
interface Person {
  env: Record<string, string>;
  user: string;
}
const PERSON = 'aaron';
const human = (user: string): Person => ({ env: bus.env, user });
const as = (who: Record<string, string> | Person) => (...args: string[]) => runInProcess(args, typeof who.env === 'object' ? (who as Person) : { env: who as Record<string, string>, user: PERSON });

function storeBytes(): string {
  const f = join(bus.root, 'state', 'channels.json');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}

const signalFilesIn = (dir: string): string[] => signalsIn(bus.root, dir).map((s) => s.file);
const readSignalLine = (dir: string, file: string) => signalsIn(bus.root, dir).find((s) => s.file === file)!.env;

describe('join, leave, channels', () => {
  it('joins (creating the channel), lists it with members, and leaves (removing it when empty and unpinned)', async () => {
    const aaron = as(human('aaron'));
    expect((await aaron('join', '#ops')).stdout).toContain('joined #ops (new channel)');
    expect((await aaron('join', 'ops')).stdout).toContain('already in #ops');
    const list = JSON.parse((await aaron('channels', '--json')).stdout) as { channels: { name: string; joined: boolean; members: { id: string; name: string }[] }[] };
    expect(list.channels.map((c) => c.name)).toEqual(['open', 'ops']);
    expect(list.channels[1]?.members).toEqual([{ id: 'aaron', name: 'aaron', kind: 'human', live: false, host: null }]);
    expect(list.channels[1]?.joined).toBe(true);
    const left = await aaron('leave', 'ops', '--json');
    expect(JSON.parse(left.stdout)).toMatchObject({ channel: 'ops', left: true, removed: true });
    expect(readChannels(bus.root).channels.ops).toBeUndefined();
  });

  it('keeps a pinned channel when its last member leaves, and --joined filters', async () => {
    const aaron = as(human('aaron'));
    await aaron('join', 'ops', '--pin');
    await aaron('channels', 'create', 'design', 'the', 'look');
    await aaron('leave', 'ops');
    expect(readChannels(bus.root).channels.ops?.pinned).toBe(true);
    const all = JSON.parse((await aaron('channels', '--json')).stdout) as { channels: { name: string; description: string; pinned: boolean }[] };
    expect(all.channels.find((c) => c.name === 'design')).toMatchObject({ description: 'the look', pinned: true });
    const joined = JSON.parse((await aaron('channels', '--joined', '--json')).stdout) as { channels: { name: string }[] };
    expect(joined.channels.map((c) => c.name)).toEqual(['open']);
    await aaron('channels', 'unpin', 'ops');
    expect(readChannels(bus.root).channels.ops?.pinned).toBe(false);
  });

  it('create makes a pinned, empty, unjoined channel and refuses an existing one', async () => {
    const aaron = as(human('aaron'));
    expect((await aaron('channels', 'create', '#design', 'pixels')).exitCode).toBe(0);
    const c = readChannels(bus.root).channels.design;
    expect(c).toMatchObject({ pinned: true, description: 'pixels', members: {} });
    const before = storeBytes();
    const again = await aaron('channels', 'create', 'design');
    expect(again.exitCode).toBe(4);
    expect(storeBytes()).toBe(before);
  });

  it('describe shows and sets one printable line, refusing control characters and line breaks', async () => {
    const aaron = as(human('aaron'));
    await aaron('channels', 'create', 'ops');
    expect((await aaron('channels', 'describe', 'ops', 'deploys', 'and', 'incidents')).exitCode).toBe(0);
    expect((await aaron('channels', 'describe', 'ops')).stdout.trim()).toBe('deploys and incidents');
    const before = storeBytes();
    for (const bad of ['two\nlines', 'esc \u001b[31mred', 'bell\u0007', 'rtl \u202Eevil', 'sep\u2028x', 'x'.repeat(201)]) {
      const r = await aaron('channels', 'describe', 'ops', bad);
      expect(r.exitCode, JSON.stringify(bad)).toBe(2);
      expect(r.stderr.trim().split('\n')[0]).toMatch(/^attend: a description/);
    }
    expect(storeBytes()).toBe(before);
    expect((await aaron('channels', 'describe', 'nope')).exitCode).toBe(1);
  });

  it('#open is always joined and cannot be left, dissolved or kicked from', async () => {
    const aaron = as(human('aaron'));
    expect((await aaron('join', '#open')).stdout).toContain('always joined');
    for (const args of [['leave', 'open'], ['leave', '#open'], ['dissolve', '#open'], ['dissolve', 'broadcast'], ['kick', 'bob', '#open']]) {
      const r = await aaron(...args);
      expect(r.exitCode, args.join(' ')).toBe(4);
    }
    expect(storeBytes()).toBe('');
  });

  it('refuses bad input with one line and a documented code, writing nothing', async () => {
    const aaron = as(human('aaron'));
    await aaron('join', 'ops');
    const before = storeBytes();
    const cases: [string[], number][] = [
      [['join', '../etc'], 2],
      [['join', 'a|b'], 2],
      [['join', 'a,b'], 2],
      [['join', 'has space'], 2],
      [['join', ''], 2],
      [['leave', 'nope'], 1],
      [['leave', '..'], 2],
      [['channels', 'pin', 'nope'], 1],
      [['kick', 'bob', 'nope'], 1],
      [['kick', 'bob', 'ops'], 1],
      [['invite', 'nobody-here', 'ops'], 1],
      [['dissolve', 'nope'], 1],
    ];
    for (const [args, code] of cases) {
      const r = await aaron(...args);
      expect(r.exitCode, args.join(' ')).toBe(code);
      expect(r.stderr.split('\n')[0]).toMatch(/^attend: /);
    }
    expect(storeBytes()).toBe(before);
    const dirs = existsSync(join(bus.root, 'signals')) ? readdirSync(join(bus.root, 'signals')) : [];
    expect(dirs).toEqual([]);
  });

  it('send --channel to a channel that does not exist fails with the list; non-members may post', async () => {
    await as(human('aaron'))('join', 'ops');
    const bob = as(human('bob'));
    const missing = await bob('send', '--channel', 'nope', 'hello');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('#ops');
    expect(signalFilesIn('@nope')).toEqual([]);
    const posted = await bob('send', '--channel', '#ops', 'hello from outside');
    expect(posted.exitCode).toBe(0);
    expect(signalFilesIn('@ops')).toHaveLength(1);
  });
});

describe('invite, kick, dissolve', () => {
  it('invite tells the invitee; joining owes the newest 50 messages and counts the rest', async () => {
    const alice = session({ name: 'alice' });
    const bob = session({ name: 'bob' });
    await as(alice.env)('join', 'ops');
    for (let i = 0; i < 62; i++) expect((await as(alice.env)('send', '--channel', 'ops', `m${i}`)).exitCode).toBe(0);
    const inv = await as(alice.env)('invite', 'bob', '#ops', '--json');
    expect(inv.exitCode).toBe(0);
    const noticeId = JSON.parse(inv.stdout).notice as string;
    // The notice is a real message in bob's tray, addressed to bob, from alice.
    const tray = attendKey(bob.cwd);
    const env = readSignalLine(tray, `${noticeId}.signal`);
    expect(env).toMatchObject({ fromKind: 'agent', fromId: alice.sessionId, to: bob.sessionId, from: `claude:${alice.sessionId}` });
    expect(env.body).toContain('attend join ops');
    const bobInbox = await as(bob.env)('inbox', '--json');
    expect(JSON.parse(bobInbox.stdout).messages.map((m: { id: string }) => m.id)).toContain(noticeId);
    expect(readChannels(bus.root).channels.ops?.invites[bob.sessionId]?.by).toBe(alice.sessionId);

    const joined = await as(bob.env)('join', 'ops');
    expect(joined.stdout).toContain('invited: 50 earlier messages to read, 12 older not shown');
    const owed = readOwed(bus.root, bob.sessionId);
    expect(owed).toHaveLength(1);
    expect(owed[0]?.channel).toBe('ops');
    expect(owed[0]?.olderCount).toBe(12);
    const all = signalFilesIn('@ops').map((f) => f.replace(/\.signal$/, '')).sort();
    expect(owed[0]?.ids).toEqual(all.slice(-50));
    expect(readChannels(bus.root).channels.ops?.invites[bob.sessionId]).toBeUndefined();
  });

  it('a plain join owes nothing; inviting a member or yourself is refused', async () => {
    const alice = session();
    const bob = session();
    await as(alice.env)('join', 'ops');
    await as(alice.env)('send', '--channel', 'ops', 'hi');
    await as(bob.env)('join', 'ops');
    expect(readOwed(bus.root, bob.sessionId)).toEqual([]);
    expect((await as(alice.env)('invite', bob.sessionId, 'ops')).exitCode).toBe(4);
    expect((await as(alice.env)('invite', alice.sessionId, 'ops')).exitCode).toBe(2);
  });

  it('an agent outside a channel cannot invite to it', async () => {
    const alice = session();
    const bob = session();
    await as(human('aaron'))('join', 'ops');
    const r = await as(alice.env)('invite', bob.sessionId, 'ops');
    expect(r.exitCode).toBe(4);
    expect(readChannels(bus.root).channels.ops?.invites).toEqual({});
  });

  it('kick removes a member and tells it; an agent cannot kick a human', async () => {
    const alice = session({ name: 'alice' });
    const bob = session({ name: 'bob' });
    const aaron = as(human('aaron'));
    await aaron('join', 'ops');
    await as(alice.env)('join', 'ops');
    await as(bob.env)('join', 'ops');
    const refused = await as(alice.env)('kick', 'aaron', 'ops');
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain('an agent cannot kick a human');
    expect(readChannels(bus.root).channels.ops?.members.aaron).toBeDefined();

    const kicked = await as(alice.env)('kick', 'bob', '#ops', '--json');
    expect(kicked.exitCode).toBe(0);
    const r = JSON.parse(kicked.stdout) as { kicked: { id: string }; notice: string };
    expect(r.kicked.id).toBe(bob.sessionId);
    expect(readChannels(bus.root).channels.ops?.members[bob.sessionId]).toBeUndefined();
    const env = readSignalLine(attendKey(bob.cwd), `${r.notice}.signal`);
    expect(env).toMatchObject({ fromKind: 'agent', fromId: alice.sessionId, to: bob.sessionId });
    expect(env.body).toContain('removed from #ops');
    // Kicking someone no longer in the channel: not found, nothing written.
    expect((await as(alice.env)('kick', 'bob', 'ops')).exitCode).toBe(1);
    // A human may kick an agent.
    expect((await aaron('kick', 'alice', 'ops')).exitCode).toBe(0);
    expect(Object.keys(readChannels(bus.root).channels.ops?.members ?? {})).toEqual(['aaron']);
  });


  it('a member that ended is named by its last name, marked gone, and can be kicked by it (issue 21 item 4)', async () => {
    // The channel verbs named a member by its live name, else its raw id: a session that
    // ended read `0a1b…-full-id` in the members a kick lists, and its name no longer found it.
    const api = session({ name: 'api' });
    const web = session({ name: 'web' });
    const aaron = as(human('aaron'));
    await aaron('join', 'ops');
    await as(api.env)('join', 'ops');
    await as(web.env)('join', 'ops');
    api.kill();
    await waitFor(() => !processAlive(api.pid), { what: 'api to exit' });
    const missing = await aaron('kick', 'nobody', 'ops');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('members: ');
    expect(missing.stderr).toContain('api (gone)');
    expect(missing.stderr).not.toContain(api.sessionId);
    const kicked = await aaron('kick', 'api', 'ops', '--json');
    expect(kicked.exitCode, kicked.stderr).toBe(0);
    expect(JSON.parse(kicked.stdout).kicked).toEqual({ id: api.sessionId, name: 'api (gone)', kind: 'agent' });
  });
  it('dissolve is refused while another member is live, unless --force; members are told', async () => {
    const alice = session();
    const bob = session();
    await as(alice.env)('join', 'ops');
    await as(bob.env)('join', 'ops');
    await as(human('aaron'))('join', 'ops');
    await as(alice.env)('send', '--channel', 'ops', 'about to go');
    // A listing made the channel's listing cache: it goes with the directory.
    await as(alice.env)('inbox');
    expect(existsSync(join(bus.root, 'cache', 'listing', '@ops'))).toBe(true);
    const refused = await as(alice.env)('dissolve', 'ops');
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain('--force');
    expect(readChannels(bus.root).channels.ops).toBeDefined();
    expect(signalFilesIn('@ops')).toHaveLength(1);

    const forced = await as(alice.env)('dissolve', 'ops', '--force', '--json');
    expect(forced.exitCode).toBe(0);
    const r = JSON.parse(forced.stdout) as { notified: string[]; notice: string; removedMessages: number };
    expect(r.notified.sort()).toEqual([bob.sessionId, 'aaron'].sort());
    expect(r.removedMessages).toBe(1);
    expect(readChannels(bus.root).channels.ops).toBeUndefined();
    expect(existsSync(join(bus.root, 'signals', '@ops'))).toBe(false);
    expect(existsSync(join(bus.root, 'cache', 'listing', '@ops'))).toBe(false);
    // bob hears it in his tray, aaron (a human) on #open; both carry the full `to` set.
    const toBob = readSignalLine(attendKey(bob.cwd), `${r.notice}.signal`);
    const toAaron = readSignalLine('_broadcast', `${r.notice}.signal`);
    expect(toBob.fromId).toBe(alice.sessionId);
    expect(toBob.to?.split(',').sort()).toEqual([bob.sessionId, 'aaron'].sort());
    expect(toAaron.to).toBe(toBob.to);
    expect(toBob.body).toContain('#ops was dissolved');
  });

  it('renders hostile member names in error lines as data', async () => {
    const evil = session({ name: 'evil\u001b[2J\u001b]0;x\u0007' });
    await as(evil.env)('join', 'ops');
    const r = await as(human('aaron'))('kick', 'nobody', 'ops');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('evil␛[2J');
    expect(r.stderr).not.toContain('\u001b');
  });

  it('dissolve without --force succeeds when the other members are dead', async () => {
    const alice = session();
    const bob = session();
    await as(alice.env)('join', 'ops');
    await as(bob.env)('join', 'ops');
    bob.kill();
    await waitFor(() => !processAlive(bob.pid), { what: 'bob to exit' });
    const r = await as(alice.env)('dissolve', 'ops');
    expect(r.exitCode).toBe(0);
  });
});

describe('a channel message addressed to someone', () => {
  it('is refused when the addressee is not a member (they would never see it), and written when they are', async () => {
    const alpha = session({ name: 'alpha' });
    const gamma = session({ name: 'gamma' });
    await as(alpha.env)('join', 'ops');
    const refused = await as(alpha.env)('send', '--channel', 'ops', '--to', 'gamma', 'you will not see this');
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toBe('attend: gamma is not in #ops and would never see it; attend invite gamma ops brings them in; or send it to them directly without the channel\n');
    expect(signalsIn(bus.root, '@ops')).toEqual([]);
    await as(gamma.env)('join', 'ops');
    const ok = await as(alpha.env)('send', '--channel', 'ops', '--to', 'gamma', 'now you will');
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(signalsIn(bus.root, '@ops').map((s) => s.env.to)).toEqual([gamma.sessionId]);
    // And gamma's delivery shows it.
    expect((await runInProcess(['inbox', '--drain', '--format', 'plain'], { env: gamma.env })).stdout).toContain('now you will');
  });
});

describe('a name that matches more than one party', () => {
  it('is ambiguous with the candidates listed; an id, a path or human:<user> picks one', async () => {
    const agentNick = session({ name: 'nick' });
    const other = session({ name: 'other' });
    // The agent was named before the person came: it keeps its name, so the two share it.
    seeLive(bus);
    // The human `nick` is live through a chat heartbeat.
    const { writePresence } = await import('../../tools/bus/presence/heartbeats.js');
    writePresence(bus.root, { id: 'nick', kind: 'human', origin: bus.home, heartbeat: Date.now(), role: 'chat', pid: process.pid });
    const r = await as(other.env)('send', '--to', 'nick', 'which one?');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`'nick' is ambiguous: `);
    expect(r.stderr).toContain(`nick (agent, ${agentNick.sessionId})`);
    expect(r.stderr).toContain('nick (human, nick)');
    expect(signalsIn(bus.root, '_broadcast')).toEqual([]);
    const toHuman = await as(other.env)('send', '--to', 'human:nick', 'to the person', '--json');
    expect(toHuman.exitCode, toHuman.stderr).toBe(0);
    expect(JSON.parse(toHuman.stdout).to).toBe('nick');
    const toAgent = await as(other.env)('send', '--to', agentNick.sessionId, 'to the session', '--json');
    expect(JSON.parse(toAgent.stdout).to).toBe(agentNick.sessionId);
  });
});

describe('one ownership rule for the channel verbs (issue #10 §14)', () => {
  it('members describe, pin and invite; only the creator or a human dissolves or purges; non-members do none of it', async () => {
    const aaron = as(human('aaron'));
    const a = session({ name: 'alpha' });
    const b = session({ name: 'beta' });
    expect((await aaron('channels', 'create', 'ops', 'human made')).exitCode).toBe(0);
    expect((await aaron('invite', 'alpha', 'ops')).exitCode).toBe(0);
    expect((await as(a.env)('join', 'ops')).exitCode).toBe(0);
    await as(a.env)('send', '--channel', 'ops', 'history worth keeping');
    // A just-invited agent cannot delete a human's channel or its history.
    for (const args of [['dissolve', 'ops', '--force'], ['purge', 'ops']]) {
      const r = await as(a.env)(...args);
      expect(r.exitCode, args.join(' ')).toBe(4);
      expect(r.stderr).toMatch(/only the creator of #ops or a human can (dissolve|purge) it/);
    }
    expect(readChannels(bus.root).channels.ops).toBeDefined();
    expect(signalsIn(bus.root, '@ops')).toHaveLength(1);
    // Members may describe and pin; a non-member may not describe, pin, unpin or invite.
    expect((await as(a.env)('channels', 'describe', 'ops', 'now by alpha')).exitCode).toBe(0);
    for (const args of [['channels', 'describe', 'ops', 'by beta'], ['channels', 'unpin', 'ops'], ['channels', 'pin', 'ops'], ['invite', 'alpha', 'ops']]) {
      const r = await as(b.env)(...args);
      expect(r.exitCode, args.join(' ')).toBe(4);
      expect(r.stderr, args.join(' ')).toMatch(/only members of #ops can/);
    }
    expect(readChannels(bus.root).channels.ops).toMatchObject({ description: 'now by alpha', pinned: true });
    // Reading a description is open to all.
    expect((await as(b.env)('channels', 'describe', 'ops')).stdout.trim()).toBe('now by alpha');
    // The creator of its own channel may dissolve it; a human may dissolve any.
    await as(b.env)('join', 'mine');
    expect((await as(b.env)('dissolve', 'mine')).exitCode).toBe(0);
    expect((await aaron('dissolve', 'ops', '--force')).exitCode).toBe(0);
    expect(readChannels(bus.root).channels.ops).toBeUndefined();
  });

  it('the rule is stated in --help', async () => {
    for (const cmd of ['channels', 'invite', 'kick', 'dissolve', 'purge']) {
      expect((await runInProcess([cmd, '--help'], { env: bus.env })).stdout, cmd).toContain('only its creator dissolves or purges it');
    }
  });
});
