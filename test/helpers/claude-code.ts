// Drives the real, pinned Claude Code (installed by scripts/install-claude-code.sh) in a
// temporary HOME against the scripted Messages API server. Nothing leaves 127.0.0.1.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, removeTree } from './bus.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The native binary from the registry package; ATTEND_CLAUDE_BIN overrides it. */
export function claudeBinary(): string {
  const override = process.env.ATTEND_CLAUDE_BIN;
  if (override) return override;
  const native = join(REPO, '.tools/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude');
  if (!existsSync(native)) {
    throw new Error(`Claude Code is not installed at ${native}; run scripts/install-claude-code.sh (CI does, in .ci/run)`);
  }
  return native;
}

export interface ClaudeHome {
  dir: string;
  home: string;
  claudeDir: string;
  root: string;
  /** A project directory to run the session in. */
  project: string;
  /** A directory holding an `attend` that runs the built binary; on PATH when attend is "installed". */
  binDir: string;
  env(opts: { baseUrl: string; attendOnPath?: boolean }): Record<string, string>;
  writeSettings(settings: unknown): void;
  cleanup(): void;
}

export function makeClaudeHome(): ClaudeHome {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'attend-cc-')));
  const home = join(dir, 'home');
  const claudeDir = join(home, '.claude');
  const root = join(dir, 'bus');
  const project = join(dir, 'work', 'proj');
  const binDir = join(dir, 'bin');
  for (const d of [claudeDir, project, binDir]) mkdirSync(d, { recursive: true });
  // The executable npm links as `attend`.
  symlinkSync(join(dirname(BIN), 'attend.cjs'), join(binDir, 'attend'));
  // Skip first-run onboarding; -p does not need it, but it keeps the run quiet.
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, projects: {} }));
  return {
    dir,
    home,
    claudeDir,
    root,
    project,
    binDir,
    env({ baseUrl, attendOnPath = true }) {
      const basePath = process.env.PATH ?? '/usr/bin:/bin';
      return {
        PATH: attendOnPath ? `${binDir}:${basePath}` : basePath,
        HOME: home,
        USER: 'tester',
        ATTEND_HOME: root,
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        NO_COLOR: '1',
        TERM: 'dumb',
      };
    },
    writeSettings(settings) {
      writeFileSync(join(claudeDir, 'settings.json'), JSON.stringify(settings, null, 2));
    },
    cleanup: () => removeTree(dir),
  };
}

export interface ClaudeRun {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code; rejects (and kills the process) past the deadline. */
  exited(timeoutMs?: number): Promise<number>;
  kill(): void;
}

export function runClaude(args: string[], opts: { env: Record<string, string>; cwd: string }): ClaudeRun {
  const child = spawn(claudeBinary(), args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const done = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return {
    child,
    pid: child.pid as number,
    stdout: () => out,
    stderr: () => err,
    exited: (timeoutMs = 60_000) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`claude did not exit within ${timeoutMs} ms\nstdout: ${out.slice(-2000)}\nstderr: ${err.slice(-2000)}`));
        }, timeoutMs);
        void done.then((code) => {
          clearTimeout(timer);
          resolve(code);
        });
      }),
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
