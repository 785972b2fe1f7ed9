// The Stop-hook drain's cycle (tools/drain/drain.ts drainOnce), in-process over a temporary
// bus: what it writes, that it records only after writing, and its re-entry ceiling. The
// spawned hook is covered by test/e2e/drain.test.ts and test/e2e/hooks.test.ts.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DRAIN_ROUND_CEILING, type DrainDeps, drainOnce } from '../../tools/drain/drain.js';
import { createReporter } from '../../tools/bus/store/index.js';
import { createVerbCtx } from '../../tools/verbs/context.js';
import { nameLookup } from '../../tools/wire/display.js';
import { makeTempBus, runInProcess, type TempBus } from '../helpers/temp-bus.js';

let bus: TempBus;
beforeEach(() => (bus = makeTempBus()));
afterEach(() => bus.cleanup());

/** A declared agent: an identity with its own ledger and no process behind it. */
const agentEnv = () => ({ ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: 'unit-drain' });

function deps(out: string[], warnings: string[] = [], write?: (t: string) => void): DrainDeps {
  return {
    root: bus.root,
    now: Date.now,
    reporter: createReporter((l) => warnings.push(l)),
    names: (me) => nameLookup([], me),
    write: write ?? ((t) => out.push(t)),
    warn: (l) => warnings.push(l),
  };
}

const presented = (o: { shown: string[]; collapsed: string[] }) => [...o.shown, ...o.collapsed];
const who = () => createVerbCtx({ env: agentEnv(), cwd: bus.home, pid: process.pid }).identity();
const send = async (body: string) => {
  const r = await runInProcess(['send', body], { env: bus.env });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout.trim();
};

describe('drainOnce', () => {
  it('writes what is new once, and nothing on the next round', async () => {
    // The first drain of a new ledger cold-starts; messages written after it are fresh.
    expect(drainOnce(deps([]), who(), { stopHookActive: false }, 'plain').reason).toBe('nothing-pending');
    const id = await send('the build is green');
    const out: string[] = [];
    const first = drainOnce(deps(out), who(), { stopHookActive: false }, 'plain');
    expect(first.reason).toBe('delivered');
    // A broadcast not addressed to the agent is announced in one collapsed line (party-aware).
    expect(presented(first)).toEqual([id]);
    expect(out.join('')).toContain('#open');
    const again: string[] = [];
    expect(drainOnce(deps(again), who(), { stopHookActive: false }, 'plain').reason).toBe('nothing-pending');
    expect(again).toEqual([]);
  });

  it('records nothing when the write fails, so the next round delivers it', async () => {
    drainOnce(deps([]), who(), { stopHookActive: false }, 'plain');
    const id = await send('do not lose me');
    expect(() =>
      drainOnce(
        deps([], [], () => {
          throw new Error('stdout closed');
        }),
        who(),
        { stopHookActive: false },
        'plain',
      ),
    ).toThrow('stdout closed');
    const out: string[] = [];
    expect(presented(drainOnce(deps(out), who(), { stopHookActive: false }, 'plain'))).toEqual([id]);
    expect(out.join('')).toContain('1 peer message');
  });

  it('hook format is Stop-hook JSON with the text as additional context', async () => {
    drainOnce(deps([]), who(), { stopHookActive: false }, 'hook');
    await send('as a hook');
    const out: string[] = [];
    drainOnce(deps(out), who(), { stopHookActive: false }, 'hook');
    const parsed = JSON.parse(out.join('')) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(parsed.hookSpecificOutput.hookEventName).toBe('Stop');
    expect(parsed.hookSpecificOutput.additionalContext).toContain('1 peer message delivered at the turn boundary');
  });

  it(`lets the session stop after ${DRAIN_ROUND_CEILING} blocking rounds in a row, leaving the rest pending`, async () => {
    drainOnce(deps([]), who(), { stopHookActive: false }, 'plain');
    for (let i = 0; i < DRAIN_ROUND_CEILING; i++) {
      await send(`round ${i}`);
      expect(drainOnce(deps([]), who(), { stopHookActive: i > 0 }, 'plain').reason).toBe('delivered');
    }
    const id = await send('after the ceiling');
    const warnings: string[] = [];
    const capped = drainOnce(deps([], warnings), who(), { stopHookActive: true }, 'plain');
    expect(capped.reason).toBe('ceiling');
    expect(warnings.join('\n')).toContain('Stop-hook rounds in a row');
    // A new turn (stop_hook_active false) starts the count again and delivers what waited.
    expect(presented(drainOnce(deps([]), who(), { stopHookActive: false }, 'plain'))).toEqual([id]);
  });
});
