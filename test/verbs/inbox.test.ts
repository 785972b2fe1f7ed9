// Reading by id (issue #10 §11): a node reads what it receives and what it sent; the human
// who owns the bus may read everything, and the output says so.

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { runInbox, scanInbox } from '../../tools/verbs/inbox.js';
import { processAlive } from '../../tools/identity/system.js';
import type { Scope } from '../../tools/wire/envelope.js';
import { attendKey } from '../../tools/wire/names.js';
import { remoteMachine } from '../helpers/remote.js';
import { ME, type TempBus, runInProcess, useTempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
const session = useTempBus((b) => (bus = b));
const run = (env: Record<string, string>, ...args: string[]) => runInProcess(args, { env });

describe('inbox <id>', () => {
  it('an agent cannot read another session’s direct message; its sender and addressee can; the owner can, and is told', async () => {
    const alpha = session({ name: 'alpha' });
    const beta = session({ name: 'beta' });
    const eve = session({ name: 'eve' });
    const dm = (await run(alpha.env, 'send', '--to', 'beta', 'for beta only')).stdout.trim();
    const byEve = await run(eve.env, 'inbox', dm);
    expect(byEve.exitCode).toBe(1);
    expect(byEve.stdout).toBe('');
    expect(byEve.stderr).toContain(`message ${dm} was not found among the messages you receive`);
    expect((await run(eve.env, 'inbox', '--thread', dm)).exitCode).toBe(1);
    // Nor can it thread a reply under it.
    expect((await run(eve.env, 'reply', '--re', dm, 'sneaky')).exitCode).toBe(1);
    for (const who of [alpha, beta]) {
      const r = await run(who.env, 'inbox', dm, '--json');
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: dm, body: 'for beta only', access: who === alpha ? 'sent' : 'received' });
    }
    const owner = await run(bus.env, 'inbox', dm);
    expect(owner.exitCode).toBe(0);
    expect(owner.stdout).toContain('for beta only');
    expect(owner.stdout).toContain('note: read as the owner of this bus; it was not sent to you');
  });
});

describe('truthful delivery (issue #10 §15, issue 21 item 7)', () => {
  it('send says per recipient when it will be shown; inbox --sent says who has been, from the ledgers', async () => {
    const alpha = session({ name: 'alpha' });
    const beta = session({ name: 'beta' });
    const gamma = session({ name: 'gamma' });
    // beta has a live sensor heartbeat; gamma drained lately; alpha sends.
    const { writePresence } = await import('../../tools/bus/presence/heartbeats.js');
    writePresence(bus.root, { id: beta.sessionId, kind: 'agent', origin: beta.cwd, heartbeat: Date.now(), role: 'sensor', pid: beta.pid });
    await run(gamma.env, 'inbox', '--drain', '--format', 'plain');
    const sent = await run(alpha.env, 'send', '--to', 'beta', '--to', 'gamma', 'who sees this when?', '--json');
    const r = JSON.parse(sent.stdout) as { id: string; delivery: { name: string; reach: { word: string; by?: string } }[] };
    expect(Object.fromEntries(r.delivery.map((d) => [d.name, d.reach]))).toEqual({ beta: { word: 'shown', by: 'sensor' }, gamma: { word: 'next-turn' } });
    expect(sent.stderr).toBe('attend: shown to beta (sensor); at its next turn: gamma\n');
    // Nobody has been shown it yet; gamma's drain shows it.
    const before = JSON.parse((await run(alpha.env, 'inbox', '--sent', '--json')).stdout) as { messages: { id: string; recipients: { name: string; shown: boolean }[] }[] };
    expect(before.messages[0]).toMatchObject({ id: r.id, recipients: [{ name: 'beta', shown: false }, { name: 'gamma', shown: false }] });
    expect((await run(gamma.env, 'inbox', '--drain', '--format', 'plain')).stdout).toContain('who sees this when?');
    const after = JSON.parse((await run(alpha.env, 'inbox', '--sent', '--json')).stdout) as typeof before;
    expect(after.messages[0]!.recipients).toEqual([
      { id: beta.sessionId, name: 'beta', shown: false },
      { id: gamma.sessionId, name: 'gamma', shown: true, by: 'Stop hook' },
    ]);
    expect((await run(alpha.env, 'inbox', '--sent')).stdout).toContain('shown to: gamma; not yet: beta');
    // A recipient that ended is named as everywhere else (tools/wire/display.ts), not by its raw id.
    beta.kill();
    await waitFor(() => !processAlive(beta.pid), { what: 'beta to exit' });
    expect((await run(alpha.env, 'inbox', '--sent')).stdout).toContain('shown to: gamma; not yet: beta (gone)');
  });
});

describe('inbox --sent reads newest first (issue 24: what it shows, not the history)', () => {
  it('gives the caller’s own messages of every directory, newest first, each once, up to --limit', async () => {
    const alpha = session({ name: 'alpha' });
    const beta = session({ name: 'beta' });
    const mine: string[] = [];
    const say = async (who: typeof alpha, ...args: string[]) => {
      const r = await run(who.env, 'send', ...args);
      expect(r.exitCode, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    mine.push(await say(alpha, 'to everyone'));
    await say(beta, 'beta in #open');
    mine.push(await say(alpha, '--to', 'beta', 'direct to beta'));
    await say(beta, '--to', 'alpha', 'beta to alpha');
    mine.push(await say(alpha, 'again to everyone'));
    const sent = async (limit: string) => (JSON.parse((await run(alpha.env, 'inbox', '--sent', '--limit', limit, '--json')).stdout) as { messages: { id: string }[] }).messages.map((m) => m.id);
    expect(await sent('10')).toEqual([...mine].reverse());
    expect(await sent('2')).toEqual([mine[2], mine[1]]);
    // Its listing found fresh, after a send: the cache follows.
    mine.push(await say(alpha, 'last'));
    expect(await sent('1')).toEqual([mine[3]]);
  });
});

describe('scanInbox with a pick (issue 24: an adapter cycle reads what is new)', () => {
  it('passes a picked-by id unread, goes on below it, and ends where the pick says stop', async () => {
    const ids: string[] = [];
    for (const body of ['one', 'two', 'three', 'four']) ids.push((await run(bus.env, 'send', body)).stdout.trim());
    const ctx = createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid });
    const asked: string[] = [];
    const seen: string[] = [];
    scanInbox(
      ctx,
      (m) => {
        seen.push(m.body);
        return true;
      },
      undefined,
      (k) => {
        asked.push(k.id);
        return k.id === ids[0] ? 'stop' : k.id === ids[2] ? 'skip' : 'read';
      },
    );
    expect(seen).toEqual(['four', 'two']);
    expect(asked).toEqual([ids[3], ids[2], ids[1], ids[0]]);
  });
});

describe('an unreadable scope directory (issue #10 item 6)', () => {
  it('the inbox verb says which directory it could not read, for every front end (the MCP tool returns the page as is)', async () => {
    expect((await run(bus.env, 'send', 'kept')).exitCode).toBe(0);
    const open = join(bus.root, 'signals', '_broadcast');
    rmSync(open, { recursive: true });
    writeFileSync(open, 'not a directory', { mode: 0o600 });
    const warnings: string[] = [];
    const ctx = createVerbCtx({ env: bus.env, cwd: bus.home, pid: process.pid, warn: (l) => void warnings.push(l) });
    const page = runInbox(ctx, { limit: 20, page: 1 });
    expect(page.messages).toEqual([]);
    expect(page.unreadable).toEqual([{ path: open, reason: 'not a directory' }]);
    expect(warnings).toEqual([`attend: cannot read ${open}: not a directory; its messages are not shown`]);
  });
});

describe('mail from another machine in a tray (issue 19: the listing and the message agree)', () => {
  // Both answers come from tools/wire/visibility.ts; what once differed were the ids they were
  // given: the listing cache kept a remote line's ids raw while readMessage localizes them
  // (tools/bus/trust/origin.ts), so `to:bravo:<me>` from alpha was missing from the page and
  // the count though `attend inbox <id>` showed it, and alpha's `<me>` passed for bravo's.
  it('is listed and counted exactly when reading it by id shows it', async () => {
    // This bus is bravo on the hub; alpha writes to it.
    const alpha = remoteMachine(bus, 'alpha', 'bravo');
    try {
      expect((await run(bus.env, 'send', 'hello from bravo')).exitCode).toBe(0);
      const ant = '0c0ffee0-1111-4222-8333-444455556666';
      const tray: Scope = { kind: 'tray', key: attendKey(bus.home) };
      // alpha's session writes to bravo's person; alpha's person (the same username) to bravo's ann.
      const forMe = alpha.write(tray, { fromId: ant, fromKind: 'agent', to: `bravo:${ME}`, body: 'to bravo’s person' });
      const notForMe = alpha.write(tray, { fromId: ME, fromKind: 'human', to: 'bravo:ann', body: 'to bravo’s ann' });
      const byId = (id: string) => run(bus.env, 'inbox', id, '--json');
      expect(JSON.parse((await byId(forMe)).stdout)).toMatchObject({ fromId: ant, fromHost: 'alpha', to: ME, access: 'received' });
      // The owner may read the other by id, and is told it was not sent to them.
      expect(JSON.parse((await byId(notForMe)).stdout)).toMatchObject({ fromId: `alpha:${ME}`, to: 'ann', access: 'owner' });
      const page = JSON.parse((await run(bus.env, 'inbox', '--json')).stdout) as { total: number; messages: { id: string }[] };
      expect(page.messages.map((m) => m.id)).toContain(forMe);
      expect(page.messages.map((m) => m.id)).not.toContain(notForMe);
      expect(page.total).toBe(page.messages.length);
      expect(page.total).toBe(2);
    } finally {
      alpha.cleanup();
    }
  });
});
