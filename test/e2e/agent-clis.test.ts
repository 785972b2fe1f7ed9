// The real Codex and Gemini CLI (pinned, installed by scripts/install-agent-clis.sh) against
// scripted local model servers: each runs `attend whoami`, `attend send` and
// `attend inbox --drain` through its own shell tool, and attend's tools through the MCP server
// its config file names; each instance is an agent of its own (not the person), with its own id
// and its own delivery ledger, and a message round-trips between it and the person.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentCli, type AgentHome, codexEnv, geminiEnv, makeAgentHome, runAgent } from '../helpers/agent-clis.js';
import { ME, runBin, waitFor } from '../helpers/bus.js';
import { type FakeModel, type ModelReply, type ModelTurn, startFakeGemini, startFakeResponses } from '../helpers/fake-models.js';

interface Who {
  kind: string;
  id: string;
  from: string;
  via: string | null;
}

interface InboxMessage {
  id: string;
  body: string;
  fromKind: string;
  fromId: string;
}

let home: AgentHome | undefined;
let model: FakeModel | undefined;
let modelB: FakeModel | undefined;
afterEach(async () => {
  await model?.close();
  await modelB?.close();
  home?.cleanup();
  home = model = modelB = undefined;
});

const CLIS: { cli: AgentCli; shell: string; start: typeof startFakeResponses; env: typeof codexEnv; prefix: RegExp }[] = [
  { cli: 'codex', shell: 'exec_command', start: startFakeResponses, env: codexEnv, prefix: /^codex-[0-9a-z]+\.[0-9a-z]+$/ },
  { cli: 'gemini', shell: 'run_shell_command', start: startFakeGemini, env: geminiEnv, prefix: /^gemini-[0-9a-z]+\.[0-9a-z]+$/ },
];

/** A shell tool call of this CLI running `cmd`. */
function shell(cli: AgentCli, cmd: string): ModelReply {
  return cli === 'codex' ? { tool: 'exec_command', args: { cmd, login: true, yield_time_ms: 30_000 } } : { tool: 'run_shell_command', args: { command: cmd, description: 'attend' } };
}

/** Plays `steps` in order, one per tool result, then ends the turn. */
function steps(list: ((turn: ModelTurn) => ModelReply)[]): (turn: ModelTurn) => ModelReply {
  return (turn) => list[turn.results.length]?.(turn) ?? { text: 'done' };
}

const json = <T>(text: string): T => JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)) as T;

function personInbox(h: AgentHome): InboxMessage[] {
  const r = runBin(['inbox', '--json', '--limit', '50'], { env: h.env, cwd: h.project });
  if (r.exitCode !== 0) throw new Error(`attend inbox: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { messages: InboxMessage[] }).messages;
}

function say(h: AgentHome, args: string[]): void {
  const r = runBin(['send', ...args], { env: h.env, cwd: h.project });
  if (r.exitCode !== 0) throw new Error(`attend send ${args.join(' ')}: ${r.stderr}`);
}

/** How a drain shows the one message on #open: summed up, `[1 message, <sender>, #open, <age>]`. */
const OPEN_SHOWN = /\[1 message, [^,\]]+, #open,/;

// Collects what the drain prints until the person's answer is among it: the model's shell
// waits for a condition, with a deadline. No command substitution: Gemini CLI's shell tool
// refuses a command that has one.
const DRAIN_UNTIL_PONG =
  ": > drained.txt; timeout 30 sh -c 'until grep -q PONG drained.txt; do attend inbox --drain --format plain </dev/null >> drained.txt; sleep 0.05; done'; cat drained.txt; echo DRAINED";

// Waits for the test to have answered A (a file it writes), then drains.
const DRAIN_WHEN_ANSWERED = "timeout 30 sh -c 'until [ -e answered ]; do sleep 0.05; done'; attend inbox --drain --format plain </dev/null; echo DRAINED";

describe.each(CLIS)('$cli: attend through its shell tool and its MCP server', ({ cli, shell: shellTool, start, env, prefix }) => {
  it('is an agent of its own per instance, with its own ledger, and a message round-trips', async () => {
    home = makeAgentHome();
    const h = home;
    say(h, ['news for everyone']);
    // Two instances at once, each with its own scripted model. A says hello to the person and
    // drains until the person's answer is there; B drains once the person has answered A.
    model = await start(
      steps([
        () => shell(cli, 'attend whoami --json'),
        () => shell(cli, `attend send --to ${ME} "hello from ${cli}"`),
        () => shell(cli, DRAIN_UNTIL_PONG),
        () => shell(cli, 'attend inbox --drain --format plain </dev/null; echo SECOND-DRAIN'),
      ]),
    );
    modelB = await start(steps([() => shell(cli, 'attend whoami --json'), () => shell(cli, DRAIN_WHEN_ANSWERED)]));
    const runA = runAgent(cli, { env: env(h, model.url), cwd: h.project });
    const runB = runAgent(cli, { env: env(h, modelB.url), cwd: h.project });
    const hello = await waitFor(() => personInbox(h).find((m) => m.body === `hello from ${cli}`), { timeoutMs: 45_000, what: `hello from ${cli} in the person's inbox` }).catch((err: Error) => {
      throw new Error(`${err.message}\nstderr: ${runA.stderr().slice(-3000)}\nturns: ${JSON.stringify(model?.turns.map((t) => t.results))}`);
    });
    say(h, ['--to', hello.fromId, 'PONG for the first']);
    writeFileSync(join(h.project, 'answered'), '');
    expect(await runA.exited(), runA.stderr().slice(-3000)).toBe(0);
    expect(await runB.exited(), runB.stderr().slice(-3000)).toBe(0);

    const a = model.turns.at(-1)!.results;
    expect(a.map((r) => r.name)).toEqual([shellTool, shellTool, shellTool, shellTool]);
    const whoA = json<Who>(a[0]!.output);
    expect(whoA).toMatchObject({ kind: 'agent', via: 'agent-cli' });
    expect(whoA.id).toMatch(prefix);
    expect(whoA.id).not.toBe(ME);
    expect(hello).toMatchObject({ fromKind: 'agent', fromId: whoA.id });
    // Its drain showed the broadcast (summed up, as #open is) and the answer, once: the second
    // drain shows neither.
    expect(a[2]!.output).toMatch(OPEN_SHOWN);
    expect(a[2]!.output).toContain('PONG for the first');
    expect(a[3]!.output).toContain('SECOND-DRAIN');
    expect(a[3]!.output).not.toMatch(OPEN_SHOWN);
    expect(a[3]!.output).not.toContain('PONG');

    // B: another agent, whose own ledger still held the broadcast A had taken, and which the
    // answer to A was not for.
    const b = modelB.turns.at(-1)!.results;
    const whoB = json<Who>(b[0]!.output);
    expect(whoB).toMatchObject({ kind: 'agent', via: 'agent-cli' });
    expect(whoB.id).toMatch(prefix);
    expect(whoB.id).not.toBe(whoA.id);
    expect(b[1]!.output).toContain('DRAINED');
    expect(b[1]!.output).toMatch(OPEN_SHOWN);
    expect(b[1]!.output).not.toContain('PONG');
  });

  it('through attend mcp in its MCP config: the same agent as its shell tool, and its send reaches the person', async () => {
    home = makeAgentHome();
    const h = home;
    say(h, ['news over mcp']);
    model = await start((turn) => {
      // Codex offers them as namespace `mcp__attend` + name, Gemini CLI under their own names.
      const tool = (name: string): string | undefined => turn.tools.find((t) => t === name || (t.includes('attend') && t.endsWith(name)));
      const done = turn.results.length;
      if (done === 0) {
        const whoami = tool('whoami');
        return whoami ? { tool: whoami, args: {} } : { text: `no attend tools among ${turn.tools.join(', ')}` };
      }
      if (done === 1) return { tool: tool('send')!, args: { message: `hello over mcp from ${cli}`, to: [ME] } };
      if (done === 2) return { tool: tool('inbox')!, args: {} };
      if (done === 3) return shell(cli, 'attend whoami --json');
      return { text: 'done' };
    });
    const run = runAgent(cli, { env: env(h, model.url, { mcp: true }), cwd: h.project });
    expect(await run.exited(), run.stderr().slice(-3000)).toBe(0);
    const r = model.turns.at(-1)!.results;
    expect(r, JSON.stringify(model.turns.map((t) => t.tools))).toHaveLength(4);
    const viaMcp = json<Who>(r[0]!.output);
    const viaShell = json<Who>(r[3]!.output);
    expect(viaMcp).toMatchObject({ kind: 'agent' });
    expect(viaMcp.id).toMatch(prefix);
    expect(viaShell.id).toBe(viaMcp.id);
    expect(r[2]!.output).toContain('news over mcp');
    const got = personInbox(h).find((m) => m.body === `hello over mcp from ${cli}`);
    expect(got).toMatchObject({ fromKind: 'agent', fromId: viaMcp.id });
  });
});
