// Drives the real, pinned Codex and Gemini CLI (installed by scripts/install-agent-clis.sh into
// $ATTEND_TOOLS_DIR, default .tools/) in a temporary HOME against the scripted model servers of
// ./fake-models.ts. Nothing leaves 127.0.0.1. `attend` is on PATH (a link to the built binary)
// and HOME holds no shell profile, so what their login shells run is under the test's control.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, removeTree } from './bus.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Where the install script put the CLIs: $ATTEND_TOOLS_DIR, else the checkout's .tools/. */
export function toolsDir(): string {
  return resolve(REPO, process.env.ATTEND_TOOLS_DIR ?? '.tools');
}

export type AgentCli = 'codex' | 'gemini';

/** The JS entry point npm links as the CLI's command (Codex's execs its native binary). */
export function cliEntry(cli: AgentCli): string {
  const entry =
    cli === 'codex'
      ? join(toolsDir(), 'codex/node_modules/@openai/codex/bin/codex.js')
      : join(toolsDir(), 'gemini-cli/node_modules/@google/gemini-cli/bundle/gemini.js');
  if (!existsSync(entry)) throw new Error(`${cli} is not installed at ${entry}; run scripts/install-agent-clis.sh (the e2e tier's global setup does)`);
  return entry;
}

export interface AgentHome {
  dir: string;
  home: string;
  /** The bus (ATTEND_HOME). */
  root: string;
  project: string;
  /** The `attend` on PATH: absolute, as the MCP configs name it. */
  attend: string;
  env: Record<string, string>;
  cleanup(): void;
}

export function makeAgentHome(): AgentHome {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'attend-agents-')));
  const home = join(dir, 'home');
  const root = join(dir, 'bus');
  const project = join(dir, 'work', 'proj');
  const binDir = join(dir, 'bin');
  for (const d of [home, project, binDir]) mkdirSync(d, { recursive: true });
  const attend = join(binDir, 'attend');
  symlinkSync(join(dirname(BIN), 'attend.cjs'), attend);
  const env: Record<string, string> = {
    PATH: `${binDir}:${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    ATTEND_HOME: root,
    NO_COLOR: '1',
    TERM: 'dumb',
  };
  if (process.env.USER) env.USER = process.env.USER;
  // Their shell tools start login shells, and a login shell's /etc/profile resets PATH: the
  // profile in HOME puts attend (and this node) back in front, as a user's install would.
  const profile = `export PATH="${binDir}:${dirname(process.execPath)}:$PATH"\n`;
  for (const f of ['.profile', '.bash_profile', '.bashrc']) writeFileSync(join(home, f), profile);
  return { dir, home, root, project, attend, env, cleanup: () => removeTree(dir) };
}

let codexHomes = 0;

/**
 * Codex's config under its own `$CODEX_HOME` (<home>/.codex-<n>): the scripted provider, and
 * attend's MCP server when asked. Each run gets its own, so instances that run at once each
 * talk to their own scripted model.
 */
export function codexEnv(h: AgentHome, baseUrl: string, opts: { mcp?: boolean } = {}): Record<string, string> {
  const codexHome = join(h.home, `.codex-${++codexHomes}`);
  mkdirSync(codexHome, { recursive: true });
  const lines = [
    'model = "test-model"',
    'model_provider = "scripted"',
    '',
    '[model_providers.scripted]',
    'name = "scripted"',
    `base_url = "${baseUrl}/v1"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
  ];
  if (opts.mcp) {
    // Codex starts MCP servers with a minimal environment (ATTEND_HOME does not reach it).
    lines.push('', '[mcp_servers.attend]', `command = "${h.attend}"`, 'args = ["mcp"]', `env = { ATTEND_HOME = "${h.root}" }`);
  }
  writeFileSync(join(codexHome, 'config.toml'), `${lines.join('\n')}\n`);
  return { ...h.env, CODEX_HOME: codexHome };
}

/** Gemini CLI's user settings (<home>/.gemini/settings.json): API-key auth, and attend's MCP server when asked. */
export function geminiEnv(h: AgentHome, baseUrl: string, opts: { mcp?: boolean } = {}): Record<string, string> {
  const dir = join(h.home, '.gemini');
  mkdirSync(dir, { recursive: true });
  // No usage statistics, telemetry or update checks: nothing leaves 127.0.0.1 (and a flush to
  // an unreachable host holds the exit up for seconds).
  const settings: Record<string, unknown> = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  };
  // Gemini CLI's MCP servers inherit its environment, ATTEND_HOME included.
  if (opts.mcp) settings.mcpServers = { attend: { command: h.attend, args: ['mcp'] } };
  writeFileSync(join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
  // GEMINI_CLI_NO_RELAUNCH: by default Gemini CLI starts itself again as a child with a larger
  // heap (`node --max-old-space-size=<n> .../gemini.js ...`, the nearest agent ancestor attend
  // finds then), which doubles its start-up, seconds on a loaded machine; one process is
  // enough here, and both command lines are the same to attend.
  return { ...h.env, GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: baseUrl, GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_CLI_NO_RELAUNCH: 'true' };
}

export interface AgentRun {
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code; rejects (and kills the process) past the deadline. */
  exited(timeoutMs?: number): Promise<number>;
  kill(): void;
}

/** One non-interactive run: `codex exec` or `gemini -p`, the model's tool calls all approved. */
export function runAgent(cli: AgentCli, opts: { env: Record<string, string>; cwd: string; prompt?: string }): AgentRun {
  const prompt = opts.prompt ?? 'go';
  const args =
    cli === 'codex'
      ? [cliEntry(cli), 'exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt]
      : [cliEntry(cli), '-m', 'gemini-2.5-flash', '--approval-mode', 'yolo', '-p', prompt];
  const child = spawn(process.execPath, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const done = new Promise<number>((res) => child.on('exit', (code, signal) => res(code ?? (signal ? 128 : -1))));
  return {
    pid: child.pid as number,
    stdout: () => out,
    stderr: () => err,
    exited: (timeoutMs = 50_000) =>
      new Promise<number>((res, rej) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          rej(new Error(`${cli} did not exit within ${timeoutMs} ms\nstdout: ${out.slice(-2000)}\nstderr: ${err.slice(-2000)}`));
        }, timeoutMs);
        void done.then((code) => {
          clearTimeout(timer);
          res(code);
        });
      }),
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
