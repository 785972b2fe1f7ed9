// CLI wiring for the Claude Code integration: hooks, the MCP server, install, uninstall,
// doctor. Heavy modules load inside the actions.

import type { Command } from 'commander';
import type { Registrar, Io } from './cli.js';
import { type Ctx, createContext } from './context.js';

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/** Read a hook's stdin, bounded in time: a hook must never hang the session it serves. */
async function readHookStdin(ctx: Ctx, timeoutMs = 3000): Promise<string> {
  const stdin = ctx.stdin as NodeJS.ReadStream;
  if (stdin.isTTY) return '';
  return new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      stdin.off('data', onData);
      stdin.off('end', finish);
      stdin.off('error', finish);
      stdin.pause?.();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (c: Buffer | string) => {
      const b = Buffer.from(c);
      size += b.length;
      // Claude Code's payloads are a few KB; past 1 MB this is not a payload.
      if (size <= 1 << 20) chunks.push(b);
    };
    const timer = setTimeout(finish, timeoutMs);
    stdin.on('data', onData);
    stdin.once('end', finish);
    stdin.once('error', finish);
  });
}

function freshCtx(ctx: Ctx): () => Ctx {
  return () => createContext({ env: ctx.env, cwd: ctx.cwd, pid: ctx.pid, stdout: ctx.stdout, stderr: ctx.stderr, stdin: ctx.stdin, now: ctx.now });
}

/** Run the delivery drain for the Stop hook; a failure there is a warning, never a block. */
async function runStopDrain(ctx: Ctx, payload: string, warn: (line: string) => void): Promise<string> {
  const { runCli } = await import('./cli.js');
  const { Readable } = await import('node:stream');
  let out = '';
  let err = '';
  const r = await runCli(['inbox', '--drain', '--format', 'hook'], {
    env: ctx.env,
    cwd: ctx.cwd,
    pid: ctx.pid,
    now: ctx.now,
    stdin: Readable.from([payload]),
    stdout: { write: (t: string) => (out += t), isTTY: false },
    stderr: { write: (t: string) => (err += t) },
  });
  for (const line of err.split('\n')) if (line.trim()) warn(line);
  if (r.exitCode !== 0) {
    warn(`attend hook stop: the drain exited ${r.exitCode}; nothing delivered this turn`);
    return '';
  }
  return out;
}

function registerHook(program: Command, ctx: Ctx, io: Io): void {
  program
    .command('hook')
    .description("run a Claude Code hook (reads the hook's JSON on stdin; always exits 0)")
    .argument('<event>', 'session-start | session-end | stop')
    .addHelpText(
      'after',
      examples([
        "echo '{\"session_id\":\"…\",\"hook_event_name\":\"SessionStart\"}' | attend hook session-start",
        'attend hook stop < payload.json',
      ]) + '\nThe plugin and `attend install` wire these up; you rarely run them by hand.\n',
    )
    .action(async (event: string) => {
      const warn = (line: string) => io.err(line.startsWith('attend') ? line : `attend hook: ${line}`);
      const hook = await import('./commands/hook.js');
      const payload = await readHookStdin(ctx);
      try {
        let stdout = '';
        if (event === 'session-start') {
          const r = hook.runSessionStartHook(ctx, payload);
          r.warnings.forEach(warn);
          stdout = r.stdout;
        } else if (event === 'session-end') {
          const r = hook.runSessionEndHook(ctx, payload);
          r.warnings.forEach(warn);
        } else if (event === 'stop') {
          const { warnings } = hook.parseHookPayload(payload, ['session_id']);
          warnings.forEach(warn);
          stdout = await runStopDrain(ctx, payload, warn);
        } else {
          warn(`unknown hook event '${event.slice(0, 40)}' (expected ${hook.HOOK_EVENTS.join(', ')}); ignored`);
        }
        if (stdout.trim()) io.out(stdout);
      } catch (err) {
        // Hooks never block the session, whatever went wrong.
        warn(`${(err as Error)?.message ?? String(err)}; continuing`);
      }
    });
}

function registerMcp(program: Command, ctx: Ctx): void {
  program
    .command('mcp')
    .description('serve attend as an MCP server over stdio (send, reply, inbox, read, whoami, ...)')
    .addHelpText(
      'after',
      examples([
        'attend mcp',
        'claude mcp add attend -- attend mcp',
        `echo '{"mcpServers":{"attend":{"command":"attend","args":["mcp"]}}}' > .mcp.json`,
      ]),
    )
    .action(async () => {
      const { runMcp } = await import('./commands/mcp.js');
      await runMcp(ctx, { makeCtx: freshCtx(ctx) });
    });
}

export const registerIntegration: Registrar = (program, ctx, io) => {
  registerHook(program, ctx, io);
  registerMcp(program, ctx);
};
