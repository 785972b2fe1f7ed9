// CLI wiring for the Claude Code integration: hooks, the MCP server, install, uninstall,
// doctor. Heavy modules load inside the actions.

import type { Command } from 'commander';
import { type Registrar, examples } from './registrar.js';
import type { Io } from './io.js';
import { type Ctx, createContext } from './context.js';
import { readHookStdin } from './hook-stdin.js';
import { usageError } from '../wire/errors.js';

function freshCtx(ctx: Ctx): () => Ctx {
  return () => createContext({ env: ctx.env, cwd: ctx.cwd, pid: ctx.pid, stdout: ctx.stdout, stderr: ctx.stderr, stdin: ctx.stdin, now: ctx.now });
}

function registerHook(program: Command, ctx: Ctx, io: Io): void {
  program
    .command('hook')
    .description("run a Claude Code hook (reads the hook's JSON on stdin; always exits 0)")
    .argument('<event>', 'session-start | session-end | stop | pre-tool-use')
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
      const payload = await readHookStdin(ctx.stdin);
      try {
        let stdout = '';
        if (event === 'session-start') {
          const r = hook.runSessionStartHook(ctx, payload);
          r.warnings.forEach(warn);
          stdout = r.stdout;
        } else if (event === 'session-end') {
          const r = hook.runSessionEndHook(ctx, payload);
          r.warnings.forEach(warn);
        } else if (event === 'pre-tool-use') {
          // The same check as the fast path (fast-claims.ts), for a caller that came through here.
          stdout = (await import('./fast-claims.js')).preToolUseOutput(payload, ctx.env, ctx.cwd, ctx.now());
        } else if (event === 'stop') {
          // The drain writes its own output inside the ledger's lock (recorded in flight, shown, confirmed),
          // and turns every failure into a warning; it never returns a blocking exit.
          const { runDrain } = await import('./commands/drain.js');
          runDrain(ctx, { format: 'hook', payload, trace: false });
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
    .description('serve attend as an MCP server over stdio (send, reply, inbox, read, peers, whoami, status, channels, join, leave, create, describe, invite, kick, dissolve, claim, release, claims)')
    .option('--channel', "run as a Claude Code channel: push this session's new messages as notifications/claude/channel")
    .addHelpText(
      'after',
      examples([
        'attend mcp',
        'claude mcp add attend -- attend mcp',
        'claude mcp add attend-channel -- attend mcp --channel   # then: claude --channels server:attend-channel',
        `echo '{"mcpServers":{"attend":{"command":"attend","args":["mcp"]}}}' > .mcp.json`,
      ]),
    )
    .action(async (opts: { channel?: boolean }) => {
      const { runMcp } = await import('./commands/mcp.js');
      await runMcp(ctx, { makeCtx: freshCtx(ctx), channel: opts.channel ?? false });
    });
}

function printChanges(io: Io, r: { scope: string; dryRun: boolean; changes: { path: string; what: string; action: string; backup: string | null }[] }): void {
  const verb: Record<string, string> = r.dryRun
    ? { create: 'would create', update: 'would update', remove: 'would remove', unchanged: 'unchanged' }
    : { create: 'created', update: 'updated', remove: 'removed', unchanged: 'unchanged' };
  for (const c of r.changes) {
    io.out(`${(verb[c.action] ?? c.action).padEnd(12)} ${c.what}: ${c.path}${c.backup ? ` (backup: ${c.backup})` : ''}`);
  }
  if (r.changes.every((c) => c.action === 'unchanged')) io.out('Nothing to change.');
  else if (r.dryRun) io.out('Dry run: nothing was written.');
}

function registerInstall(program: Command, ctx: Ctx, io: Io): void {
  const scopeOption = (cmd: Command) =>
    cmd
      .option('--scope <scope>', 'user (~/.claude) or project (./.claude and ./.mcp.json)', 'user')
      .option('--dry-run', 'show what would change, write nothing')
      .option('--json', 'print JSON');
  scopeOption(program.command('install').description('wire attend into Claude Code: hooks, skill, MCP server (merged, backed up, idempotent)'))
    .addHelpText('after', examples(['attend install', 'attend install --dry-run', 'attend install --scope project']) + '\nRe-running changes nothing. A settings file that does not parse stops the install; nothing is written.\n')
    .action(async (opts: { scope: string; dryRun?: boolean; json?: boolean }) => {
      const { runInstall } = await import('./commands/install.js');
      const r = runInstall(ctx, { scope: opts.scope, dryRun: opts.dryRun });
      for (const w of r.warnings ?? []) io.err(`attend: warning: ${w}`);
      if (opts.json) return io.json(r);
      printChanges(io, r);
    });
  scopeOption(program.command('uninstall').description('remove what attend install added, and nothing else'))
    .addHelpText('after', examples(['attend uninstall', 'attend uninstall --scope project --dry-run']))
    .action(async (opts: { scope: string; dryRun?: boolean; json?: boolean }) => {
      const { runUninstall } = await import('./commands/uninstall.js');
      const r = runUninstall(ctx, { scope: opts.scope, dryRun: opts.dryRun });
      if (opts.json) return io.json(r);
      printChanges(io, r);
    });
  program
    .command('doctor')
    .description('check the Claude Code integration and say how to fix what is missing')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['attend doctor', 'attend doctor --json']) + '\nExits 5 when a check fails.\n')
    .action(async (opts: { json?: boolean }) => {
      const { printDoctor, runDoctor } = await import('./commands/doctor.js');
      printDoctor(io, await runDoctor(ctx), opts.json === true);
    });
}

function registerSigner(program: Command, ctx: Ctx, io: Io): void {
  program
    .command('signer')
    .description("sign for the sessions whose Bash tool runs in Claude Code's sandbox, where the key directory is out of reach (started by the SessionStart hook)")
    .option('--watch <pid>', 'the claude process to live for at first (the hook that starts it passes its own)')
    .addHelpText(
      'after',
      `${examples(['attend signer'])}
Listens on ATTEND_SIGNER (127.0.0.1:<port>, which attend install writes into Claude Code's
settings together with the sandbox rules). It answers a request only for the Claude Code
session the kernel says the connection comes from, signs only that session's own lines, and
stops once no session it answered for is alive. See docs/trust.md, "Inside Claude Code's sandbox".
`,
    )
    .action(async (opts: { watch?: string }) => {
      if (opts.watch !== undefined && !/^\d+$/.test(opts.watch)) throw usageError(`--watch takes a pid, not '${opts.watch.slice(0, 20)}'`);
      const { runSigner } = await import('./commands/signer.js');
      const r = await runSigner(ctx, opts.watch !== undefined ? { watch: Number(opts.watch) } : {});
      if (r === 'running-elsewhere') io.err(`attend signer: something already listens on ${ctx.env.ATTEND_SIGNER ?? 'its port'}; leaving it`);
      io.setExitCode(0);
    });
}

export const registerIntegration: Registrar = (program, ctx, io) => {
  registerHook(program, ctx, io);
  registerMcp(program, ctx);
  registerInstall(program, ctx, io);
  registerSigner(program, ctx, io);
};
