// Issue 23 §1, ask and wait, in-process over a temporary bus: the person asks a declared agent
// (ATTEND_AGENT, an identity without a process); the wait ends on a threaded reply from it,
// not on anything else it writes, and a timeout is exit 6 with who was and was not shown it.

import { describe, expect, it } from 'vitest';
import { parseWaitDuration, parseWaitMode } from '../../tools/verbs/ask.js';
import { EXIT } from '../../tools/wire/errors.js';
import { type TempBus, ME, declaredAgent, runInProcess, useTempBus, waitFor } from '../helpers/temp-bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

const agent = (id: string) => declaredAgent(bus, id);

/** The id of the message with this body in the party's inbox. */
async function inboxId(who: { env: Record<string, string>; cwd?: string }, body: string): Promise<string | undefined> {
  const r = await runInProcess(['inbox', '--json'], who);
  return (JSON.parse(r.stdout) as { messages: { id: string; body: string }[] }).messages.find((m) => m.body === body)?.id;
}

describe('ask and wait, in-process (issue 23 §1)', () => {
  it('the person asks an agent; an unthreaded message from it does not end the wait, its reply does', async () => {
    const a = agent('c1');
    expect((await runInProcess(['send', '--to', ME, 'hello'], a)).exitCode).toBe(0);
    const asking = runInProcess(['ask', 'codex-c1', 'status?', '--timeout', '30s'], { env: bus.env });
    let id: string | undefined;
    await waitFor(async () => (id = await inboxId(a, 'status?')), { what: 'the question in c1\'s tray' });
    expect((await runInProcess(['send', '--to', ME, 'unrelated chatter'], a)).exitCode).toBe(0);
    const rr = await runInProcess(['send', '--to', ME, '--re', id!, 'all green'], a);
    expect(rr.exitCode, rr.stderr).toBe(0);
    const r = await asking;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('  all green');
    expect(r.stdout).not.toContain('unrelated chatter');
  });

  it("times out with exit 6 after the send's note, saying who was not shown it", async () => {
    const a = agent('c2');
    expect((await runInProcess(['send', '--to', ME, 'hello'], a)).exitCode).toBe(0);
    const r = await runInProcess(['ask', 'codex-c2', 'still there?', '--timeout', '200ms'], { env: bus.env });
    expect(r.exitCode).toBe(EXIT.timeout);
    expect(r.stderr).toMatch(/^attend: waits for codex-c2 \(gone\), last seen \d+s ago\nattend: no reply to \S+ within 200ms: shown to nobody yet; not shown to codex-c2 \(gone\); /);
  });

  it('parses durations and modes, refusing the rest with a usage error', () => {
    expect(parseWaitDuration('90s')).toBe(90_000);
    expect(parseWaitDuration('5m')).toBe(300_000);
    expect(parseWaitDuration('250ms')).toBe(250);
    for (const bad of ['0s', '5', 'soon', '25h', '-1s']) expect(() => parseWaitDuration(bad)).toThrow(/--timeout/);
    expect(parseWaitMode('shown')).toBe('shown');
    expect(() => parseWaitMode('read')).toThrow(/reply or shown/);
  });
});
