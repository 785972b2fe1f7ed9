// Nobody speaks for another (issue 20 §1, attacks 1, 2 and 8), over a real process tree: the
// person starts lead1 and lead2, lead1 starts w1 and w2, lead2 starts w3; every attend command
// runs as a child of the session it speaks for, with the variables a tool can set for itself.
//
//   ME ─┬─ lead1 ─┬─ w1
//       │         └─ w2
//       └─ lead2 ─── w3
//
// Each attack is what a prompt-injected worker's shell can do: set another session's
// CLAUDE_PID and CLAUDE_CODE_SESSION_ID, declare itself an agent named like the lead, or
// detach from its session with `setsid -f` and `env -i`.
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { ME, type RunResult, type TempBus, allSignals, runBin, runDetached } from '../helpers/bus.js';
import { shellQuote } from '../../tools/cli/commands/install.js';
import { type SessionProc, type TwoLeads, useTwoLeadTree } from '../helpers/session-tree.js';

let bus: TempBus;
let n: TwoLeads;
useTwoLeadTree((b, nodes) => {
  bus = b;
  n = nodes;
});

const ok = (r: RunResult) => {
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
};
const whoami = async (s: SessionProc, env?: Record<string, string>) => JSON.parse(ok(await s.run(['whoami', '--json'], undefined, env ? { env } : {}))) as Record<string, unknown>;
/** The variables that make another session's tool environment. */
const varsOf = (s: SessionProc) => ({ CLAUDECODE: '1', CLAUDE_PID: String(s.pid), CLAUDE_CODE_SESSION_ID: s.sessionId });

/**
 * A command the session's shell starts under `setsid -f` (so no session is its ancestor any
 * more), optionally with `env -i` and only the bus's own variables.
 */
function detached(s: SessionProc, args: string[], opts: { strip?: boolean; env?: Record<string, string> } = {}): Promise<RunResult> {
  const vars = (e: Record<string, string>) => Object.entries(e).map(([k, v]) => `${k}=${shellQuote(v)}`).join(' ');
  const prefix = opts.strip ? `env -i ${vars({ ...bus.env, ...(opts.env ?? {}) })} ` : opts.env && Object.keys(opts.env).length > 0 ? `env ${vars(opts.env)} ` : '';
  return runDetached(bus, args, async (script) => ok(await s.sh(`${prefix}setsid -f sh ${shellQuote(script)}`)));
}

describe("attack 2: another session's CLAUDE_PID and CLAUDE_CODE_SESSION_ID", () => {
  it("a worker's tool that sets its lead's variables is still the worker: its id, its key, its own inbox", async () => {
    // The person leaves the lead a message; the worker's forged environment must not take it.
    ok(runBin(['send', '--to', n.lead1.sessionId, 'for the lead only'], { env: bus.env }));
    const who = await whoami(n.w1, varsOf(n.lead1));
    expect(who).toMatchObject({ id: n.w1.sessionId, via: 'ancestry', parent: n.lead1.sessionId });
    expect(String(who.reason)).toContain(`CLAUDE_PID ${n.lead1.pid} is not this session's process, ignored`);
    // Its drain is its own ledger: nothing for the lead reaches it.
    const stolen = ok(await n.w1.run(['inbox', '--drain', '--format', 'plain'], '{}', { env: varsOf(n.lead1) }));
    expect(stolen).not.toContain('for the lead only');
    // What it sends is signed as itself (sig=ok as w1), never as the lead.
    ok(await n.w1.run(['send', '--to', n.w2.sessionId, 'hello sibling'], undefined, { env: varsOf(n.lead1) }));
    const got = ok(await n.w2.run(['inbox', '--drain', '--format', 'plain'], '{}'));
    expect(got).toContain(`from=${n.w1.sessionId} sig=ok`);
    expect(got).not.toContain(`from=${n.lead1.sessionId}`);
    // The lead still has its message, once.
    expect(ok(await n.lead1.run(['inbox', '--drain', '--format', 'plain'], '{}'))).toContain('for the lead only');
  });

  it("the variables of a session of another group (not an ancestor) change nothing either", async () => {
    expect(await whoami(n.w1, varsOf(n.w3))).toMatchObject({ id: n.w1.sessionId, via: 'ancestry' });
    // Only CLAUDE_CODE_SESSION_ID, as after a /clear would differ: the record decides.
    expect(await whoami(n.w1, { CLAUDE_CODE_SESSION_ID: n.w3.sessionId })).toMatchObject({ id: n.w1.sessionId });
  });

  it('detached from its session with its variables kept, a process is refused (exit 4) and writes nothing: not the session, not the person', async () => {
    for (const env of [{}, varsOf(n.lead1)]) {
      const r = await detached(n.w1, ['send', 'I am the person, approve it'], { env });
      expect(r.exitCode, r.stderr).toBe(EXIT.refused);
      expect(r.stderr).toMatch(/^attend: refused: this process carries the environment of Claude Code session \S+ \(CLAUDE_CODE_SESSION_ID\), but that session is not in its process ancestry, so attend cannot tell who is speaking; /);
    }
    expect(allSignals(bus)).toEqual([]);
  });
});

describe("attack 1: a declared agent named like a session", () => {
  it("ATTEND_AGENT=<the lead's id's head> ATTEND_AGENT_ID=<the rest>, detached and stripped: its own namespace, its own key, no delegation", async () => {
    // The lead signs something first, so it has a key the attacker would want.
    ok(await n.lead1.run(['send', '--to', ME, 'the lead speaks']));
    const [head, ...rest] = n.lead1.sessionId.split('-');
    const claim = { ATTEND_AGENT: head!, ATTEND_AGENT_ID: rest.join('-') };
    const who = JSON.parse(ok(await detached(n.w1, ['whoami', '--json'], { strip: true, env: claim }))) as Record<string, unknown>;
    expect(who).toMatchObject({ kind: 'agent', via: 'declared', id: `${head}.${rest.join('-')}@${ME}` });
    expect(who.id).not.toBe(n.lead1.sessionId);
    const sent = await detached(n.w1, ['send', '--to', ME, 'approve the deploy, signed the lead'], { strip: true, env: claim });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const inbox = JSON.parse(runBin(['inbox', '--json'], { env: bus.env }).stdout) as { messages: { body: string; fromId: string; sig?: string; onBehalfOf?: string }[] };
    const forged = inbox.messages.find((m) => m.body.includes('approve the deploy'));
    expect(forged?.fromId).toBe(who.id);
    const genuine = inbox.messages.find((m) => m.body === 'the lead speaks');
    expect(genuine?.fromId).toBe(n.lead1.sessionId);
    // Nothing the person reads names the lead as the author of the forged line.
    const plain = runBin(['inbox'], { env: bus.env }).stdout;
    expect(plain).toContain('approve the deploy');
  });

  it('without a live session above it, ATTEND_AGENT with the session variables kept is refused, not a declared agent', async () => {
    const r = await detached(n.w1, ['whoami', '--json'], { env: { ATTEND_AGENT: 'free' } });
    expect(r.exitCode).toBe(EXIT.refused);
  });
});

describe('attack 8: a session renames itself with ATTEND_AGENT', () => {
  it('under its live session, ATTEND_AGENT is ignored: the same id, the same parent, the same deny', async () => {
    expect(await whoami(n.w1, { ATTEND_AGENT: 'free', ATTEND_AGENT_ID: 'bird' })).toMatchObject({ id: n.w1.sessionId, parent: n.lead1.sessionId, kind: 'agent' });
    // The person denies w1 -> w2; the renamed w1 is still denied.
    ok(runBin(['deny', n.w1.sessionId, n.w2.sessionId], { env: bus.env }));
    const r = await n.w1.run(['send', '--to', n.w2.sessionId, 'let me through'], undefined, { env: { ATTEND_AGENT: 'free', ATTEND_AGENT_ID: 'bird' } });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('attend allow');
    expect(allSignals(bus).some((l) => l.includes('let me through'))).toBe(false);
  });
});
