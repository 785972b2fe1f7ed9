// `attend cleanup --older-than` (issue 21 §4): a message goes only when every party it was
// for has been shown it, never on its id's age alone; a person can force it. In-process over a
// temporary bus, no child processes: declared agents (ATTEND_AGENT, ATTEND_AGENT_ID) are
// identities with ledgers of their own and no process, and the cleanup runs on a clock set
// ahead so that messages written now are past its cut.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../tools/cli/cli.js';
import { attendKey } from '../../tools/wire/names.js';
import { ME, type TempBus, makeTempBus } from '../helpers/temp-bus.js';
import { ids, join as joinChannel, put } from '../helpers/fixtures.js';

let bus: TempBus;
beforeEach(() => (bus = makeTempBus()));
afterEach(() => bus.cleanup());

const DAY = 86_400_000;
const declared = (instance: string) => ({ ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: instance });
/** The id a declared instance resolves to (tools/identity/resolve.ts declaredAgentId). */
const did = (instance: string) => `bot.${instance}@${ME}`;

/** The CLI in-process, on a clock `aheadMs` from now (every command's cwd is the bus's home). */
async function cli(args: string[], env: Record<string, string>, aheadMs = 0): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const { exitCode } = await runCli(args, {
    env,
    cwd: bus.home,
    now: () => Date.now() + aheadMs,
    stdout: { write: (t: string) => (stdout += t), isTTY: false },
    stderr: { write: (t: string) => (stderr += t) },
    stdin: Readable.from([]),
  });
  return { exitCode, stdout, stderr };
}

interface Retention {
  messages: number;
  kept: number;
  heldBy: string[];
  holders: { id: string; messages: number; scopes: string[]; why: string[] }[];
  keptMessages: { scope: string; id: string; for: { id: string; why: string }[] }[];
  forced: number;
}

async function retention(args: string[], env: Record<string, string>, aheadMs: number): Promise<Retention> {
  const r = await cli(['cleanup', '--json', ...args], env, aheadMs);
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { retention: Retention }).retention;
}

const signal = (scope: string, id: string) => join(bus.root, 'signals', scope, `${id}.signal`);

describe('cleanup --older-than keeps what a party it was for has not been shown (issue 21 §4)', () => {
  it('keeps a direct message to an agent that never drained past the cut, and removes it once its drain showed it', async () => {
    const tray = attendKey(bus.home);
    // To the agent and to the person: a person without a ledger reads history in chat and
    // inbox, so it holds nothing back; the agent has been shown nothing.
    const dm = put(bus.root, ids(), { scope: { kind: 'tray', key: tray }, to: `${did('a1')},${ME}`, fromId: ME, body: 'the schema changed, please rebase' });
    const dry = await retention(['--older-than', '90d', '--dry-run'], bus.env, 91 * DAY);
    expect(dry).toMatchObject({ messages: 0, kept: 1, heldBy: [did('a1')], keptMessages: [{ scope: 'tray', id: dm, for: [{ id: did('a1'), why: 'no-ledger' }] }] });
    const text = await cli(['cleanup', '--older-than', '90d'], bus.env, 91 * DAY);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain('kept 1 older message not every party it was for has been shown (--force removes it):');
    expect(text.stdout).toContain(`${did('a1')}: 1 in tray (nothing has delivered to it yet)`);
    expect(existsSync(signal(tray, dm))).toBe(true);

    const drain = await cli(['inbox', '--drain', '--format', 'plain'], declared('a1'));
    expect(drain.exitCode, drain.stderr).toBe(0);
    expect(drain.stdout).toContain('please rebase');
    const after = await retention(['--older-than', '90d'], bus.env, 91 * DAY);
    expect(after).toMatchObject({ messages: 1, kept: 0, heldBy: [] });
    expect(existsSync(signal(tray, dm))).toBe(false);
  });

  it("keeps a channel message below a member's watermark that its cold start passed over without showing; --force (a person's) removes it", async () => {
    const t0 = Date.now();
    for (const id of [did('a'), did('b')]) joinChannel(bus.root, 'ops', id, t0 - 60_000);
    const m = put(bus.root, ids(), { scope: { kind: 'channel', name: 'ops' }, to: '#ops', fromId: ME, body: 'deploy at noon' });
    // bot-a is shown it at once; bot-b's first delivery comes 150 s later, past the
    // cold-start window: its watermark moves over the message without showing it.
    expect((await cli(['inbox', '--drain', '--format', 'plain'], declared('a'))).stdout).toContain('deploy at noon');
    const b = await cli(['inbox', '--drain', '--format', 'plain'], declared('b'), 150_000);
    expect(b.exitCode, b.stderr).toBe(0);
    expect(b.stdout).not.toContain('deploy at noon');

    // 160 s on, the cut 5 s back: bot-b is live (its drain 10 s ago), bot-a no longer is.
    const dry = await retention(['--older-than', '5s', '--dry-run'], bus.env, 160_000);
    expect(dry).toMatchObject({ messages: 0, kept: 1, heldBy: [did('b')], holders: [{ id: did('b'), messages: 1, scopes: ['#ops'], why: ['before-ledger'] }] });
    const text = await cli(['cleanup', '--older-than', '5s', '--dry-run'], bus.env, 160_000);
    expect(text.stdout).toContain('would keep 1 older message not every party it was for has been shown (--force removes it):');
    // bot-b is live, so it goes by its display name.
    expect(text.stdout).toMatch(/^ {2}\S+: 1 in #ops \(older than what its delivery began with\)$/m);
    expect(existsSync(signal('@ops', m))).toBe(true);

    // Forcing is the person's decision: an agent is refused, and nothing is removed.
    const refused = await cli(['cleanup', '--older-than', '5s', '--force'], declared('b'), 160_000);
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain('only a person may force retention');
    expect(existsSync(signal('@ops', m))).toBe(true);

    const forced = await retention(['--older-than', '5s', '--force'], bus.env, 160_000);
    expect(forced).toMatchObject({ messages: 1, kept: 0, forced: 1, holders: [{ id: did('b'), messages: 1 }] });
    expect(existsSync(signal('@ops', m))).toBe(false);
  });
});
