// Attention (issue 23 §3) over real processes: `attend send --urgent/--quiet`, `attend focus`,
// a real `attend run` sensor, the Stop-hook drain and `attend mcp --channel`. Every "not
// shown" is proved against a control message written after it: the sensor reads both in one
// wake or the control later, so once the control is out, the other would have been too.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSensor } from '../../tools/bus/delivery/sensor-claim.js';
import { readPresence } from '../../tools/bus/presence/heartbeats.js';
import { BIN, ME, type FakeSession, type TempBus, fakeSession, makeTempBus, runBin, useFamilyPolicy, waitFor } from '../helpers/bus.js';
import { headerIds, startSensor, type SensorProc } from '../helpers/delivery.js';
import { connectMcp } from '../helpers/mcp-client.js';

let bus: TempBus;
let me: FakeSession;
let other: FakeSession;
const procs: SensorProc[] = [];
const clients: Client[] = [];

beforeEach(() => {
  bus = makeTempBus();
  useFamilyPolicy(bus); // attention, not permissions: these sessions have no lineage
  me = fakeSession(bus, { name: 'listener' });
  other = fakeSession(bus, { name: 'talker', cwd: `${bus.home}/talker` });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const p of procs.splice(0)) {
    p.proc.kill('SIGKILL');
    await p.exited;
  }
  me.kill();
  other.kill();
  bus.cleanup();
});

async function sensorFor(s: FakeSession): Promise<SensorProc> {
  const p = startSensor(s.env, [], s.cwd);
  procs.push(p);
  await waitFor(() => readSensor(bus.root, s.sessionId)?.pid === p.proc.pid && readPresence(bus.root).some((r) => r.id === s.sessionId && r.role === 'sensor' && r.pid === p.proc.pid), { what: 'the sensor up' });
  return p;
}

/** `attend send` as `env` (the person by default); returns the id and what it said on stderr. */
function send(args: string[], env: Record<string, string> = bus.env): { id: string; stderr: string } {
  const r = runBin(['send', ...args], { env });
  expect(r.exitCode, r.stderr).toBe(0);
  return { id: r.stdout.trim(), stderr: r.stderr };
}

const drain = () => {
  const r = runBin(['inbox', '--drain', '--format', 'plain'], { env: me.env, cwd: me.cwd });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
};

const headerOf = (text: string, id: string) => text.split('\n').find((l) => l.startsWith('[attend message ') && l.includes(` id=${id}]`));

describe('attention', () => {
  it('a quiet message makes no sensor line and is drained at the Stop hook; an urgent one is marked in the sensor line', async () => {
    const sensor = await sensorFor(me);
    const quiet = send(['--quiet', '--to', me.sessionId, 'fyi: docs regenerated']);
    // The sender is told it waits for the turn boundary.
    expect(quiet.stderr).toMatch(/at its next turn: listener/);
    const urgent = send(['--urgent', '--to', me.sessionId, 'stop: main is broken']);
    await waitFor(() => headerIds(sensor.stdout()).includes(urgent.id), { what: 'the urgent message in the sensor' });
    expect(headerIds(sensor.stdout())).toEqual([urgent.id]);
    expect(headerOf(sensor.stdout(), urgent.id)).toMatch(/ urgency=urgent id=/);
    expect(sensor.stdout()).toContain(`\nURGENT message from ${ME} (human, to you): stop: main is broken`);
    // The turn boundary shows the quiet one, marked, and not the urgent one again.
    const text = drain();
    expect(headerIds(text)).toEqual([quiet.id]);
    expect(headerOf(text, quiet.id)).toMatch(/ urgency=quiet id=/);
    expect(text).toContain('fyi: docs regenerated');
  });

  it('an urgent message is marked in the drain and comes first', () => {
    const normal = send(['--to', me.sessionId, 'when you have a minute']);
    const urgent = send(['--urgent', '--to', me.sessionId, 'the deploy is failing']);
    const text = drain();
    expect(headerIds(text)).toEqual([urgent.id, normal.id]);
    expect(text).toMatch(new RegExp(`\\nURGENT message from ${ME} \\(human, to you, tray, \\d+s ago\\):\\n {2}│ the deploy is failing`));
  });

  it('in focus, an agent’s message waits for the turn boundary and its sender is told; a person’s and an urgent one wake', async () => {
    const f = runBin(['focus', '--for', '45m'], { env: me.env, cwd: me.cwd });
    expect(f.exitCode, f.stderr).toBe(0);
    expect(f.stdout).toMatch(/^in focus until \d\d:\d\d: only urgent messages and people wake you/);
    const peers = JSON.parse(runBin(['peers', '--json'], { env: bus.env }).stdout) as { peers: { id: string; focusUntil: number | null }[] };
    expect(peers.peers.find((p) => p.id === me.sessionId)?.focusUntil).toBeGreaterThan(Date.now() + 44 * 60_000);
    expect(peers.peers.find((p) => p.id === other.sessionId)?.focusUntil).toBeNull();
    expect(runBin(['whoami'], { env: me.env, cwd: me.cwd }).stdout).toMatch(/\nfocus: {4}until \d\d:\d\d /);
    expect(runBin(['peers'], { env: bus.env }).stdout).toMatch(/Focus[\s\S]*to \d\d:\d\d/);

    const sensor = await sensorFor(me);
    const held = send(['--to', me.sessionId, 'agent chatter'], other.env);
    expect(held.stderr).toMatch(/listener is in focus until \d\d:\d\d; shown at its next turn boundary/);
    const urgent = send(['--urgent', '--to', me.sessionId, 'agent emergency'], other.env);
    expect(urgent.stderr).not.toMatch(/in focus/);
    const person = send(['--to', me.sessionId, 'a person asks']);
    expect(person.stderr).not.toMatch(/in focus/);
    await waitFor(() => headerIds(sensor.stdout()).includes(person.id) && headerIds(sensor.stdout()).includes(urgent.id), { what: 'the urgent and the person’s message' });
    expect(headerIds(sensor.stdout()).sort()).toEqual([urgent.id, person.id].sort());
    expect(headerIds(drain())).toEqual([held.id]);

    // Focus off: an agent's message wakes again.
    expect(runBin(['focus', '--off'], { env: me.env, cwd: me.cwd }).stdout).toMatch(/^focus ended/);
    const after = send(['--to', me.sessionId, 'agent again'], other.env);
    expect(after.stderr).not.toMatch(/in focus/);
    await waitFor(() => headerIds(sensor.stdout()).includes(after.id), { what: 'the message after focus ended' });
  });

  it('presence and notices alone wake nobody: a join and an invitation make no sensor line; the drain shows the invitation', async () => {
    expect(runBin(['join', 'ops'], { env: me.env, cwd: me.cwd }).exitCode).toBe(0);
    const made = runBin(['join', 'review'], { env: bus.env });
    expect(made.exitCode, made.stderr).toBe(0);
    const sensor = await sensorFor(me);
    const joined = runBin(['join', 'ops'], { env: other.env, cwd: other.cwd });
    expect(joined.exitCode, joined.stderr).toBe(0);
    const invite = runBin(['invite', me.sessionId, 'review', '--json'], { env: bus.env });
    expect(invite.exitCode, invite.stderr).toBe(0);
    const notice = (JSON.parse(invite.stdout) as { notice: string }).notice;
    const control = send(['--to', me.sessionId, 'the control']);
    await waitFor(() => headerIds(sensor.stdout()).includes(control.id), { what: 'the control message' });
    expect(headerIds(sensor.stdout())).toEqual([control.id]);
    const text = drain();
    expect(headerIds(text)).toEqual([notice]);
    expect(text).toContain('invite: you are invited to #review');
  });

  it('the MCP channel push marks an urgent message and never pushes a quiet one; MCP send takes urgency', async () => {
    const client = new Client({ name: 'attention-test', version: '0.0.0' });
    const notices: { method: string; params?: { content?: string; meta?: Record<string, string> } }[] = [];
    client.fallbackNotificationHandler = async (n) => {
      notices.push(n as (typeof notices)[number]);
    };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--channel'], env: me.env, cwd: me.cwd, stderr: 'pipe' }));
    clients.push(client);
    // The person's MCP server sends: `urgency` is a parameter of `send`.
    const person = await connectMcp(bus, { name: 'attention-person' });
    clients.push(person);
    const call = async (args: Record<string, unknown>) => {
      const r = (await person.callTool({ name: 'send', arguments: { to: [me.sessionId], ...args } })) as { isError?: boolean; structuredContent?: { id: string; urgency: string | null } };
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      return r.structuredContent!;
    };
    const quiet = await call({ message: 'quiet over mcp', urgency: 'quiet' });
    expect(quiet.urgency).toBe('quiet');
    const urgent = await call({ message: 'urgent over mcp', urgency: 'urgent' });
    const pushed = (id: string) => notices.find((n) => n.method === 'notifications/claude/channel' && n.params?.meta?.id === id);
    const n = await waitFor(() => pushed(urgent.id), { timeoutMs: 15_000, what: 'the urgent push' });
    expect(n.params?.meta).toMatchObject({ id: urgent.id, urgency: 'urgent', from_id: ME });
    expect(n.params?.content).toMatch(/ urgency=urgent id=/);
    expect(n.params?.content).toContain('URGENT message from');
    expect(pushed(quiet.id)).toBeUndefined();
    expect(headerIds(drain())).toEqual([quiet.id]);
    const bad = (await person.callTool({ name: 'send', arguments: { to: [me.sessionId], message: 'x', urgency: 'loud' } })) as { isError?: boolean };
    expect(bad.isError).toBe(true);
  });

  it('--urgent and --quiet together is a usage error and writes nothing', () => {
    const r = runBin(['send', '--urgent', '--quiet', 'x'], { env: bus.env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/urgent or quiet, not both/);
    expect(JSON.parse(runBin(['inbox', '--json'], { env: bus.env }).stdout)).toMatchObject({ messages: [] });
  });
});
