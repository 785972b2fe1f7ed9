// "Done means" of the first hour: a newcomer follows the README's quick start alone, in a fresh
// HOME, from a `git clone` of this checkout, and gets two Claude Code sessions and a Codex
// talking. The commands come from the README itself (its first `sh` block under "Quick start",
// and the commands its prose names), so a README that changes changes what this runs, and a
// step that does not work fails here. Real clients: the pinned Claude Code and Codex against
// the scripted model servers; nothing leaves 127.0.0.1.
//
// Two departures from a newcomer's machine, both about this shared machine, not the README:
// - `npm install`'s dependencies come from this checkout's node_modules (a link, no network);
//   its build is the one `npm link` runs again anyway (the package's prepare script).
// - npm's global prefix here is the machine's, not the newcomer's to write: the README's own
//   route for that case (`npm config set prefix ~/.local`, for EACCES) is taken first.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentHome, codexEnv, runAgent } from '../helpers/agent-clis.js';
import { waitFor } from '../helpers/bus.js';
import { type ClaudeHome, type ClaudeRun, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type ApiRequest, type FakeAnthropic, startFakeAnthropic, textOf, toolResultCount } from '../helpers/fake-anthropic.js';
import { type FakeModel, startFakeResponses } from '../helpers/fake-models.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The README's quick start: its section's prose, and the commands of its first `sh` block (comments stripped). */
function quickStart(readme: string): { prose: string; commands: string[] } {
  const at = readme.indexOf('\n## Quick start\n');
  if (at < 0) throw new Error('README.md has no "## Quick start" section');
  const end = readme.indexOf('\n## ', at + 1);
  const section = readme.slice(at, end < 0 ? undefined : end);
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('the quick start has no ```sh block');
  const commands = (block[1] ?? '')
    .split('\n')
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter(Boolean);
  return { prose: section.replace(/```[\s\S]*?```/g, ''), commands };
}

/**
 * What reached the model of a request: everything but its own turns (tool results, hook text,
 * and a post through the session's inbox socket, which rides a request as a message of its
 * own that may follow the user's), not the commands it ran, which name the greetings too.
 */
function arrived(req: ApiRequest): string {
  return req.messages
    .filter((m) => m.role !== 'assistant')
    .map((m) => textOf(m.content))
    .join('\n');
}

interface Who {
  kind: string;
  id: string;
  from: string;
  displayName: string;
}

interface Check {
  name: string;
  status: string;
  detail: string;
  fix: string | null;
}

let home: ClaudeHome | undefined;
const servers: { close(): Promise<void> }[] = [];
const kills: (() => void)[] = [];
afterEach(async () => {
  for (const k of kills.splice(0)) k();
  for (const s of servers.splice(0)) await s.close();
  home?.cleanup();
  home = undefined;
});

describe('the README’s quick start, followed by a newcomer', () => {
  it('from a git clone to two Claude Code sessions and a Codex talking', async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const { prose, commands } = quickStart(readme);
    const h = (home = makeClaudeHome());
    const src = join(h.dir, 'src');
    mkdirSync(src);
    // The newcomer's shell: npm's user prefix bin (the README's ~/.local route) and node on
    // PATH, nothing of this checkout's; the bus where attend puts it by default (no ATTEND_HOME).
    const localBin = join(h.home, '.local', 'bin');
    const path = `${localBin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
    const base = { HOME: h.home, PATH: path, USER: 'tester', SHELL: '/bin/bash', NO_COLOR: '1', TERM: 'dumb' };
    const sh = (line: string, cwd: string) => {
      const r = spawnSync('/bin/bash', ['-c', line], { cwd, env: base, encoding: 'utf8', timeout: 100_000 });
      return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
    };

    // The README's EACCES route, as a command it gives.
    const prefixCmd = /`(npm config set prefix [^`]+)`/.exec(prose)?.[1];
    expect(prefixCmd, 'the quick start says how to move npm’s prefix').toBeDefined();
    expect(sh(prefixCmd!, h.home).code).toBe(0);

    let cwd = src;
    const ran: string[] = [];
    for (const line of commands) {
      ran.push(line);
      if (line === 'npm install') {
        symlinkSync(join(REPO, 'node_modules'), join(cwd, 'node_modules'));
        continue;
      }
      const clone = line.includes('git clone') ? line.replace('<repository URL>', REPO) : line;
      const r = sh(clone, cwd);
      // doctor exits 5 while something is not set up yet: what it prints is the point.
      if (/^attend doctor\b/.test(line)) expect(r.out, line).toMatch(/attend on PATH/);
      else expect(r.code, `${line}\n${r.out.slice(-3000)}`).toBe(0);
      const into = /&& cd (\S+)\s*$/.exec(line)?.[1];
      if (into) cwd = join(cwd, into);
    }
    expect(ran).toEqual(expect.arrayContaining(['npm install', 'attend doctor']));
    const attend = join(localBin, 'attend');
    expect(existsSync(attend), `npm link put attend in ${localBin}`).toBe(true);

    // What the prose says next: the login shell's PATH line doctor prints, then attend install.
    const doctor = (): Record<string, Check> => {
      const r = spawnSync(attend, ['doctor', '--json'], { cwd: h.project, env: base, encoding: 'utf8' });
      return Object.fromEntries((JSON.parse(r.stdout) as { checks: Check[] }).checks.map((c) => [c.name, c]));
    };
    const login = doctor()['attend on login PATH'];
    if (login?.status !== 'ok') {
      expect(prose).toContain('prints the one line that fixes it');
      expect(sh(login!.fix!.replace(/, then open a new login shell$/, ''), h.home).code).toBe(0);
    }
    expect(prose).toMatch(/`attend install` wires attend\s+into Claude Code/);
    expect(sh('attend install', h.project).code).toBe(0);
    const after = doctor();
    for (const name of ['attend on PATH', 'attend on login PATH', 'hooks', 'MCP server', 'skill']) expect(after[name], name).toMatchObject({ status: 'ok' });

    // Three agents, each in a project of its own. Each says who it is (a file the test reads),
    // waits to be told whom to greet, greets them, then waits for its own greeting and drains.
    const rp = join(h.dir, 'rp');
    mkdirSync(rp);
    const labels = ['a', 'b', 'c'] as const;
    const prev = { a: 'c', b: 'a', c: 'b' } as const;
    const step = (l: 'a' | 'b' | 'c'): string[] => [
      `attend whoami --json > ${rp}/who-${l}.json && timeout 90 sh -c 'until [ -s ${rp}/to-${l} ]; do sleep 0.05; done' && attend send --to "$(cat ${rp}/to-${l})" "hello from ${l}" && echo SENT-${l}`,
      `timeout 90 sh -c 'until attend inbox --json | grep -q "hello from ${prev[l]}"; do sleep 0.1; done'; attend inbox --drain --format plain </dev/null; echo DRAINED-${l}`,
    ];
    const projects = Object.fromEntries(labels.map((l) => [l, join(h.dir, 'work', { a: 'api', b: 'web', c: 'cli' }[l])]));
    for (const p of Object.values(projects)) mkdirSync(p, { recursive: true });
    const claudeEnv = (url: string) => ({ ...base, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' });
    const apis: Record<'a' | 'b', FakeAnthropic> = {} as Record<'a' | 'b', FakeAnthropic>;
    const claudes: ClaudeRun[] = [];
    for (const l of ['a', 'b'] as const) {
      const cmds = step(l);
      const api = (apis[l] = await startFakeAnthropic((req) => {
        const n = toolResultCount(req);
        const cmd = cmds[n];
        if (cmd) return { tool: 'Bash', input: { command: cmd, description: 'attend', timeout: 110_000 } };
        // The deliverer may have taken the greeting before the drain did: its post rides the
        // next request, so the model works on (a step at a time, up to 40) until it is there.
        if (!arrived(req).includes(`hello from ${prev[l]}`) && n < cmds.length + 40) return { tool: 'Bash', input: { command: 'sleep 0.25; echo WAITING', description: 'wait' } };
        return { text: 'done' };
      }));
      servers.push(api);
      const run = runClaude(['-p', 'go', '--allowedTools', 'Bash', '--output-format', 'json'], { env: claudeEnv(api.url), cwd: projects[l]! });
      kills.push(run.kill);
      claudes.push(run);
    }
    const codexCmds = step('c');
    const model: FakeModel = await startFakeResponses((turn) => {
      const cmd = codexCmds[turn.results.length];
      return cmd ? { tool: 'exec_command', args: { cmd, login: true, yield_time_ms: 100_000 } } : { text: 'done' };
    });
    servers.push(model);
    const newcomer: AgentHome = { dir: h.dir, home: h.home, root: join(h.home, '.cache', 'attend'), project: projects.c!, attend, env: base, cleanup: () => {} };
    const codex = runAgent('codex', { env: codexEnv(newcomer, model.url), cwd: projects.c! });
    kills.push(codex.kill);

    // Who is who, then the ring: a (Claude) greets b (Claude), b greets c (Codex), c greets a.
    const who = await waitFor(
      () => (labels.every((l) => existsSync(join(rp, `who-${l}.json`)) && readFileSync(join(rp, `who-${l}.json`), 'utf8').trim().endsWith('}')) ? Object.fromEntries(labels.map((l) => [l, JSON.parse(readFileSync(join(rp, `who-${l}.json`), 'utf8')) as Who])) : null),
      { timeoutMs: 90_000, what: 'all three to say who they are' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\nclaude a: ${claudes[0]!.stderr().slice(-1500)}\nclaude b: ${claudes[1]!.stderr().slice(-1500)}\ncodex: ${codex.stderr().slice(-1500)}`);
    });
    const next = { a: 'b', b: 'c', c: 'a' } as const;
    for (const l of labels) {
      writeFileSync(join(rp, `to-${l}.tmp`), who[next[l]]!.displayName);
      renameSync(join(rp, `to-${l}.tmp`), join(rp, `to-${l}`));
    }
    for (const run of claudes) expect(await run.exited(120_000), run.stderr().slice(-3000)).toBe(0);
    expect(await codex.exited(120_000), codex.stderr().slice(-3000)).toBe(0);

    // Each is an agent of its own: two Claude Code sessions and a Codex.
    expect(who.a).toMatchObject({ kind: 'agent', from: expect.stringMatching(/^claude:/) });
    expect(who.b).toMatchObject({ kind: 'agent', from: expect.stringMatching(/^claude:/) });
    expect(who.c).toMatchObject({ kind: 'agent', id: expect.stringMatching(/^codex-/) });
    expect(new Set(labels.map((l) => who[l]!.id)).size).toBe(3);
    // Each one's model saw the greeting meant for it (through the drain its shell ran or, for
    // Claude Code, whatever delivered it first), and not the one it did not get.
    const seen = {
      a: apis.a.requests.map(arrived).join('\n'),
      b: apis.b.requests.map(arrived).join('\n'),
      c: model.turns.map((t) => t.results.map((r) => r.output).join('\n')).join('\n'),
    };
    const got = (l: 'a' | 'b' | 'c') => ({ greeting: seen[l].includes(`hello from ${prev[l]}`), other: seen[l].includes(`hello from ${next[l]}`) });
    const codexSaw = model.turns.at(-1)?.results.map((r) => r.output.slice(-400)).join('\n---\n');
    const claudeSaw = (l: 'a' | 'b') => seen[l].slice(-1500);
    expect({ a: got('a'), b: got('b'), c: got('c') }, `codex: ${codexSaw}\nclaude a: ${claudeSaw('a')}\nclaude b: ${claudeSaw('b')}\nwho: ${JSON.stringify(who)}`).toEqual({
      a: { greeting: true, other: false },
      b: { greeting: true, other: false },
      c: { greeting: true, other: false },
    });
  }, 240_000);
});
