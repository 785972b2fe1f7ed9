// Names that stay put, with real processes (issue "The first hour", item 2): agents racing to
// be named all get distinct names that say what they are, and a second agent CLI started in
// the same directory does not rename the first, which `--to <its name>` still reaches.

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKnownEntries } from '../../tools/bus/presence/names.js';
import { BIN, type RunResult, type TempBus, runBin, useTempBus, waitFor } from '../helpers/bus.js';

let bus: TempBus;
useTempBus((b) => (bus = b));

/** `attend <args>` as a real process, not awaited: for processes that race. */
function runAsync(args: string[], env: Record<string, string>, cwd: string): Promise<RunResult> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ exitCode: code ?? -1, stdout, stderr }));
  });
}

describe('names given by racing processes', () => {
  it('eight agents of one harness in one directory, sending at once, get eight distinct names, each reachable', async () => {
    const cwd = join(bus.dir, 'work', 'api');
    mkdirSync(cwd, { recursive: true });
    expect(runBin(['policy', '--mode', 'family', '--open', 'everyone'], { env: bus.env }).exitCode).toBe(0);
    const agents = Array.from({ length: 8 }, (_, i) => ({ ...bus.env, ATTEND_AGENT: 'bot', ATTEND_AGENT_ID: `w${i}` }));
    const results = await Promise.all(agents.map((env, i) => runAsync(['send', `hello from ${i}`], env, cwd)));
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    const ids = agents.map((env) => (JSON.parse(runBin(['whoami', '--json'], { env, cwd }).stdout) as { id: string }).id);
    const entries = readKnownEntries(bus.root);
    const names = ids.map((id) => entries[id]?.name);
    // Every one recorded (none dropped by another's write), each by what it is, none twice.
    expect(new Set(names)).toEqual(new Set(['bot-api', ...Array.from({ length: 7 }, (_, i) => `bot-api-${i + 2}`)]));
    // Each name reaches the agent it names.
    for (const [i, id] of ids.entries()) {
      const sent = runBin(['send', '--to', names[i]!, '--json', 'yours'], { env: bus.env });
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout).to).toBe(id);
    }
  });
});

describe('a second agent CLI in one directory', () => {
  /**
   * An agent CLI as a real process tree: `node <dir>/<cli>.js` (tools/identity/resolve.ts
   * knows it by its command line) that runs `attend inbox --drain` now, and again once
   * `again` exists, printing both (or another attend command, `run`). The CLI process lives
   * between the two, so it is one agent.
   */
  function agentCli(cli: 'codex' | 'gemini', cwd: string, again: string, run: string[] = ['inbox', '--drain', '--format', 'plain']) {
    const dir = join(bus.dir, 'clis', cli);
    mkdirSync(dir, { recursive: true });
    const script = join(dir, `${cli}.js`);
    writeFileSync(
      script,
      `const { spawnSync } = require('node:child_process'); const fs = require('node:fs');
const drain = () => spawnSync(process.execPath, [${JSON.stringify(BIN)}, ...${JSON.stringify(run)}], { encoding: 'utf8' }).stdout;
process.stdout.write('FIRST\\n' + drain() + 'FIRST-DONE\\n');
const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(again)})) { clearInterval(t); process.stdout.write('SECOND\\n' + drain()); } }, 20);`,
    );
    const p = spawn(process.execPath, [script], { env: bus.env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => p.on('close', () => resolve()));
    return { pid: p.pid!, out: () => out, exited, kill: () => p.kill('SIGKILL') };
  }

  const peers = () => (JSON.parse(runBin(['peers', '--json'], { env: bus.env }).stdout) as { peers: { id: string; name: string }[] }).peers;

  it('codex keeps codex-api when a second codex and a gemini start there, and --to codex-api still reaches it', async () => {
    const cwd = join(bus.dir, 'work', 'api');
    mkdirSync(cwd, { recursive: true });
    expect(runBin(['policy', '--mode', 'family', '--open', 'everyone'], { env: bus.env }).exitCode).toBe(0);
    const again = join(bus.dir, 'again');
    const first = agentCli('codex', cwd, again);
    try {
      await waitFor(() => first.out().includes('FIRST-DONE'), { what: 'the first codex drain' });
      const before = peers().filter((p) => p.id.startsWith('codex-'));
      expect(before.map((p) => p.name)).toEqual(['codex-api']);
      const firstId = before[0]!.id;
      // A second codex and a gemini in the same directory, each a process of its own.
      // Each drains twice at once (its `again` exists already), then exits.
      const now = join(bus.dir, 'now');
      writeFileSync(now, '');
      const second = agentCli('codex', cwd, now);
      const gemini = agentCli('gemini', cwd, now);
      await Promise.all([second.exited, gemini.exited]);
      const after = peers();
      const byId = new Map(after.map((p) => [p.id, p.name]));
      expect(byId.get(firstId)).toBe('codex-api');
      expect(after.filter((p) => p.id.startsWith('codex-')).map((p) => p.name).sort()).toEqual(['codex-api', 'codex-api-2']);
      expect(after.filter((p) => p.id.startsWith('gemini-')).map((p) => p.name)).toEqual(['gemini-api']);
      const sent = runBin(['send', '--to', 'codex-api', '--json', 'for the first codex only'], { env: bus.env });
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout).to).toBe(firstId);
      // The first codex's next drain is delivered it.
      writeFileSync(again, '');
      await waitFor(() => first.out().includes('SECOND\n') && first.out().split('SECOND\n')[1]!.includes('for the first codex only'), { what: "the first codex's second drain" });
    } finally {
      first.kill();
      await first.exited;
    }
  });
  it('an agent CLI that only asked who it is has its name (what it is, where), is the child of the person who started it, and is reached by that name', async () => {
    const cwd = join(bus.dir, 'work', 'cli');
    mkdirSync(cwd, { recursive: true });
    const codex = agentCli('codex', cwd, join(bus.dir, 'never'), ['whoami', '--json']);
    try {
      await waitFor(() => codex.out().includes('FIRST-DONE'), { what: "the codex's whoami" });
      const who = JSON.parse(codex.out().split('FIRST\n')[1]!.split('FIRST-DONE')[0]!) as { id: string; displayName: string; parent: string | null };
      const person = (JSON.parse(runBin(['whoami', '--json'], { env: bus.env }).stdout) as { id: string }).id;
      expect(who).toMatchObject({ id: expect.stringMatching(/^codex-/), displayName: 'codex-cli', parent: person });
      // Not live (it runs no conduit), yet known by that name: a message to it waits for it.
      const sent = runBin(['send', '--to', 'codex-cli', '--json', 'for the codex'], { env: bus.env });
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout).to).toBe(who.id);
    } finally {
      codex.kill();
      await codex.exited;
    }
  });
});
