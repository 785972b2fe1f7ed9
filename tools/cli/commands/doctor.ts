// `attend doctor`: check each piece of the Claude Code integration and say how to fix what is
// missing (issue #6 §2). Checks report; they change nothing (the one file written, the key
// check's derived .checked beside the key records, only saves the next doctor re-verifying).

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { Ctx } from '../context.js';
import { relayHealth, waitingText } from '../../bus/presence/index.js';
import { delivererLog } from '../../bus/delivery/index.js';
import { readFileSync } from 'node:fs';
import { AttendError, EXIT, hintForCli } from '../../wire/errors.js';
import type { Io } from '../io.js';
import { isFresh, type PresenceRecord, readPresenceOf } from '../../bus/presence/index.js';
import { checkRoot, checkRootPath } from '../../bus/store/index.js';
import { keysHealth, policyFile, readPolicy } from '../../bus/trust/index.js';
import { FAMILY_POLICY_COMMAND } from '../../wire/permit.js';
import { HOOK_EVENTS, findOnPath, hasAttendHooks, howToInstall, isAttendHook, isAttendMcp, isExecutableFile, readJsonObject, targetsFor } from './install.js';
import { socketHolds } from './socket-holds.js';

export type Status = 'ok' | 'warn' | 'fail';

export interface Check {
  name: string;
  status: Status;
  detail: string;
  fix: string | null;
}

interface DoctorResult {
  ok: boolean;
  checks: Check[];
}

function safeRead(path: string): { value: Record<string, unknown> | null; error: string | null } {
  try {
    return { value: readJsonObject(path), error: null };
  } catch (err) {
    return { value: null, error: (err as Error).message };
  }
}

/** The attend plugin, installed through Claude Code's plugin manager or running this command. */
function pluginInstalled(ctx: Ctx): boolean {
  if (ctx.env.CLAUDE_PLUGIN_ROOT && existsSync(join(ctx.env.CLAUDE_PLUGIN_ROOT, 'hooks', 'hooks.json'))) return true;
  const plugins = safeRead(join(ctx.paths.claudeDir, 'plugins', 'installed_plugins.json')).value?.plugins;
  return typeof plugins === 'object' && plugins !== null && Object.keys(plugins).some((k) => k === 'attend' || k.startsWith('attend@'));
}

/** The words of a command attend install wrote: plain words and single-quoted ones (shellQuote). */
function shellWords(command: string): string[] | null {
  const words: string[] = [];
  const re = /\s*(?:'((?:[^']|'\\'')*)'|([^\s']+))/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < command.length && (m = re.exec(command)) !== null) {
    words.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!);
    at = re.lastIndex;
  }
  return command.slice(at).trim() === '' ? words : null;
}

function commandWords(entry: { command: string; args: unknown[] }): string[] {
  return [entry.command, ...entry.args.map(String)];
}

/**
 * Whether a command attend installed would run: `fail` when a path it names is missing (or
 * its program is not executable), `warn` when it runs attend by name (PATH decides), `ok`.
 */
function commandRunnable(words: string[], ctx: Ctx): { status: Status; why: string } {
  const [program, ...rest] = words;
  if (!program) return { status: 'fail', why: 'an empty command' };
  if (!isAbsolute(program)) {
    return findOnPath(ctx.env, program) ? { status: 'warn', why: `runs ${program} by name` } : { status: 'fail', why: `${program} is not on PATH` };
  }
  if (!isExecutableFile(program)) return { status: 'fail', why: `${program} is ${existsSync(program) ? 'not executable' : 'missing'}` };
  for (const w of rest) if (isAbsolute(w) && !existsSync(w)) return { status: 'fail', why: `${w} is missing` };
  return { status: 'ok', why: '' };
}

/** attend's hooks in one settings file, each with whether it would run. */
function hookRunnability(settingsPath: string, ctx: Ctx): { status: Status; detail: string }[] {
  const hooks = safeRead(settingsPath).value?.hooks;
  if (typeof hooks !== 'object' || hooks === null) return [];
  const out: { status: Status; detail: string }[] = [];
  for (const event of Object.keys(HOOK_EVENTS)) {
    const groups = (hooks as Record<string, unknown>)[event];
    if (!Array.isArray(groups)) continue;
    for (const g of groups as { hooks?: unknown }[]) {
      if (!Array.isArray(g?.hooks)) continue;
      for (const h of g.hooks as { command?: unknown }[]) {
        if (!isAttendHook(h?.command)) continue;
        const command = h.command as string;
        // The command of installs before absolute paths: `command -v attend … && attend hook …`.
        const words = /^command -v attend\b/.test(command) ? ['attend'] : shellWords(command);
        const r = words ? commandRunnable(words, ctx) : { status: 'warn' as Status, why: 'a command attend did not write' };
        if (r.status !== 'ok') out.push({ status: r.status, detail: `${event} in ${settingsPath}${r.status === 'fail' ? `: ${r.why}` : ''}` });
      }
    }
  }
  return out;
}

/** What a login shell said: its output, how it ended, or why it could not be asked. */
interface ShellAnswer {
  stdout: string;
  status: number | null;
  signal: NodeJS.Signals | null;
  error: Error | null;
}

const LOGIN_SHELL_TIMEOUT_MS = 5000;

/**
 * Ask a login shell where attend and node are, without waiting for it: the shell (a few ms of
 * profile files) runs while the other checks do, and runDoctor takes its answer last.
 */
function askLoginShell(ctx: Ctx): { shell: string; answer: Promise<ShellAnswer> } {
  const shell = ctx.env.SHELL && isAbsolute(ctx.env.SHELL) && isExecutableFile(ctx.env.SHELL) ? ctx.env.SHELL : '/bin/sh';
  const answer = new Promise<ShellAnswer>((resolve) => {
    let stdout = '';
    let error: Error | null = null;
    const child = spawn(shell, ['-lc', 'printf "attend=%s\\n" "$(command -v attend)"; printf "node=%s\\n" "$(command -v node)"'], {
      env: ctx.env as NodeJS.ProcessEnv,
      cwd: ctx.paths.home,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // A profile that hangs (or leaves a child holding the pipe) must not hang doctor: at the
    // deadline the shell is killed and its answer is what it said so far.
    const timer = setTimeout(() => {
      error = new Error(`no answer in ${LOGIN_SHELL_TIMEOUT_MS / 1000} s`);
      child.kill('SIGKILL');
      child.stdout?.destroy();
      child.unref();
      resolve({ stdout, status: null, signal: 'SIGKILL', error });
    }, LOGIN_SHELL_TIMEOUT_MS);
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.on('error', (err) => {
      error ??= err;
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ stdout, status, signal, error });
    });
  });
  return { shell, answer };
}

/**
 * `attend` on the login shell's PATH. Codex runs its tools with `$SHELL -lc`, and a login
 * shell builds PATH from the profile files, not from the parent's environment: an attend (and a
 * node) that only an interactive shell's rc file puts on PATH is not there (the first hour, item 1).
 */
function loginPathCheck(ctx: Ctx, onPath: string | null, shell: string, r: ShellAnswer): Check {
  const name = 'attend on login PATH';
  const found = (key: string) => r.stdout.split('\n').find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1).trim() || null;
  const attend = found('attend');
  const node = found('node');
  if (r.error || (r.status !== 0 && attend === null)) {
    return { name, status: 'warn', detail: `could not ask a login shell (${shell} -lc): ${r.error?.message ?? `exit ${r.status ?? r.signal}`}`, fix: null };
  }
  const sh = basename(shell);
  const profile = sh === 'zsh' ? '~/.zprofile' : sh === 'bash' && existsSync(join(ctx.paths.home, '.bash_profile')) ? '~/.bash_profile' : '~/.profile';
  const missing = [...(attend ? [] : ['attend']), ...(node ? [] : ['node'])];
  if (missing.length === 0) return { name, status: 'ok', detail: `${attend} (${shell} -lc)`, fix: null };
  // The directories to add: where this process finds attend and node.
  const dirs = [...new Set([...(attend ? [] : onPath ? [dirname(onPath)] : []), ...(node ? [] : [dirname(process.execPath)])])];
  const why = `${missing.join(' and ')} not on the PATH of a login shell (${shell} -lc), where Codex and other agents run their tools`;
  if (dirs.length === 0 || (!attend && !onPath)) {
    return { name, status: 'warn', detail: why, fix: 'put attend on PATH first (the fix of "attend on PATH"), then run attend doctor again' };
  }
  return { name, status: 'warn', detail: why, fix: `echo 'export PATH="${dirs.join(':')}:$PATH"' >> ${profile}, then open a new login shell` };
}

export async function runDoctor(ctx: Ctx): Promise<DoctorResult> {
  const login = askLoginShell(ctx);
  const checks: Check[] = [];
  const onPath = findOnPath(ctx.env, 'attend');
  checks.push(
    onPath
      ? { name: 'attend on PATH', status: 'ok', detail: onPath, fix: null }
      : { name: 'attend on PATH', status: 'fail', detail: "no attend executable on PATH (the model's Bash tool and the skill run `attend` by name)", fix: howToInstall() },
  );

  const user = targetsFor(ctx, 'user');
  const project = targetsFor(ctx, 'project');
  const pluginHooks = pluginInstalled(ctx);
  const hookFindings: string[] = [];
  const hookErrors: string[] = [];
  for (const [label, t] of [['user', user], ['project', project]] as const) {
    const r = safeRead(t.settings);
    if (r.error) hookErrors.push(r.error);
    const found = hasAttendHooks(r.value);
    if (found.length > 0) hookFindings.push(`${label} settings: ${found.join(', ')}`);
  }
  const complete = hookFindings.some((f) => f.includes('SessionStart') && f.includes('Stop'));
  const runnable = [...hookRunnability(user.settings, ctx), ...hookRunnability(project.settings, ctx)];
  const broken = runnable.filter((r) => r.status === 'fail');
  const byName = runnable.filter((r) => r.status === 'warn');
  if (hookErrors.length > 0) {
    checks.push({ name: 'hooks', status: 'fail', detail: hookErrors.join('; '), fix: 'fix the settings file by hand, then run attend install' });
  } else if (broken.length > 0) {
    checks.push({ name: 'hooks', status: 'fail', detail: `would not run: ${broken.map((b) => b.detail).join('; ')}`, fix: 'attend install (or attend install --scope project): it rewrites them to this attend' });
  } else if (complete && byName.length > 0) {
    checks.push({ name: 'hooks', status: 'warn', detail: `run attend by name, so only where Claude Code's PATH has it: ${byName.map((b) => b.detail).join('; ')}`, fix: 'attend install (or attend install --scope project): it writes absolute paths' });
  } else if (complete || pluginHooks) {
    checks.push({ name: 'hooks', status: 'ok', detail: pluginHooks ? 'from the attend plugin' : hookFindings.join('; '), fix: null });
  } else {
    checks.push({
      name: 'hooks',
      status: 'fail',
      detail: hookFindings.length > 0 ? `incomplete: ${hookFindings.join('; ')}` : `no attend hooks in ${user.settings} or ${project.settings}`,
      fix: 'attend install (or attend install --scope project), or install the attend plugin',
    });
  }

  const mcpUser = safeRead(user.mcp).value?.mcpServers as Record<string, unknown> | undefined;
  const mcpProject = safeRead(project.mcp).value?.mcpServers as Record<string, unknown> | undefined;
  const entries = ([[user.mcp, mcpUser?.attend], [project.mcp, mcpProject?.attend]] as const).filter(([, e]) => isAttendMcp(e));
  const mcpProblems = entries.map(([file, e]) => ({ file, ...commandRunnable(commandWords(e as { command: string; args: unknown[] }), ctx) })).filter((p) => p.status !== 'ok');
  const mcpBroken = mcpProblems.filter((p) => p.status === 'fail');
  checks.push(
    mcpBroken.length > 0
      ? { name: 'MCP server', status: 'fail', detail: `would not start: ${mcpBroken.map((p) => `${p.file}: ${p.why}`).join('; ')}`, fix: 'attend install (or attend install --scope project): it rewrites the entry to this attend' }
      : mcpProblems.length > 0
        ? { name: 'MCP server', status: 'warn', detail: `runs attend by name, so only where Claude Code's PATH has it: ${mcpProblems.map((p) => p.file).join('; ')}`, fix: 'attend install (or attend install --scope project): it writes absolute paths' }
        : entries.length > 0 || pluginHooks
          ? { name: 'MCP server', status: 'ok', detail: entries.length > 0 ? `registered: ${entries.map(([file]) => file).join('; ')}` : 'from the attend plugin', fix: null }
          : { name: 'MCP server', status: 'warn', detail: 'attend mcp is not registered with Claude Code', fix: 'attend install (registers it with absolute paths)' },
  );
  checks.push(
    existsSync(user.skill) || existsSync(project.skill)
      ? { name: 'skill', status: 'ok', detail: existsSync(user.skill) ? user.skill : project.skill, fix: null }
      : { name: 'skill', status: pluginHooks ? 'ok' : 'warn', detail: pluginHooks ? 'from the attend plugin' : 'the attend skill is not installed', fix: pluginHooks ? null : 'attend install' },
  );

  const root = ctx.paths.root;
  let relative: AttendError | null = null;
  try {
    checkRootPath(root);
  } catch (err) {
    relative = err as AttendError;
  }
  if (relative) {
    checks.push({ name: 'bus root', status: 'fail', detail: relative.message, fix: relative.hint ? hintForCli(relative.hint) : null });
  } else if (!existsSync(root)) {
    checks.push({ name: 'bus root', status: 'ok', detail: `${root} (not created yet; attend creates it 0700 on first use)`, fix: null });
  } else {
    try {
      checkRoot(root);
      checks.push({ name: 'bus root', status: 'ok', detail: `${root} (private)`, fix: null });
    } catch (err) {
      checks.push({ name: 'bus root', status: 'fail', detail: (err as Error).message, fix: err instanceof AttendError && err.hint ? hintForCli(err.hint) : `chmod 700 ${root}` });
    }
  }

  checks.push(keysCheck(ctx.paths.keysDir));
  if (!relative && existsSync(root)) checks.push(policyCheck(root));

  // The cross-machine relay, when one is configured or ran here (issue 13).
  const relay = relayHealth(root, ctx.now(), (pid) => ctx.procInfo(pid) !== null);
  if (relay) {
    const where = `${relay.host ?? '?'} on ${relay.hub ?? '?'}`;
    checks.push(
      !relay.running
        ? { name: 'relay', status: 'warn', detail: `attend relay (${where}) is not running; other machines get nothing from here`, fix: 'attend relay (it reads relay/config.json under the bus root)' }
        : !relay.connected
          ? { name: 'relay', status: 'warn', detail: `attend relay (${where}) cannot reach the hub${relay.lastError ? ` (${relay.lastError})` : ''}; the local bus works, traffic waits`, fix: 'attend relay status' }
          : relay.waiting.out.reason !== null || relay.waiting.in.reason !== null
            ? { name: 'relay', status: 'warn', detail: `connected: ${where}; ${(['out', 'in'] as const).filter((d) => relay.waiting[d].reason !== null).map((d) => `${d} waiting ${waitingText(relay.waiting[d], ctx.now())}`).join('; ')}`, fix: 'attend relay status' }
            : { name: 'relay', status: relay.parked > 0 ? 'warn' : 'ok', detail: `connected: ${where}${relay.parked > 0 ? `; ${relay.parked} parked` : ''}`, fix: relay.parked > 0 ? 'attend relay status' : null },
    );
  }

  const who = ctx.identity();
  if (who.resolved) {
    checks.push({ name: 'session', status: 'ok', detail: `${who.id} (${who.reason})`, fix: null });
    const now = ctx.now();
    checks.push(conduitCheck(ctx, who.id, who.pid, now));
  } else {
    checks.push({ name: 'session', status: 'warn', detail: `not inside a Claude Code session: ${who.reason}; attend writes as ${who.id} (human)`, fix: 'run attend doctor from a Claude Code session (the Bash tool) to check the session pieces' });
  }
  // Second in the list, taken last: the login shell ran while the checks above did.
  checks.splice(1, 0, loginPathCheck(ctx, onPath, login.shell, await login.answer));
  return { ok: !checks.some((c) => c.status === 'fail'), checks };
}

/**
 * The signing keys (issue 20 §2): a key or trust directory that is not private is refused by every
 * send; a record whose link does not hold refuses the keys after it; a node whose key was
 * replaced without the old one has a new identity, which readers mark `key=new`.
 */
function keysCheck(keysDir: string): Check {
  const h = keysHealth(keysDir);
  if (h.problem) return { name: 'keys', status: 'fail', detail: h.problem.message, fix: h.problem.hint ? hintForCli(h.problem.hint) : null };
  const said = (xs: string[]) => (xs.length > 3 ? [...xs.slice(0, 3), `${xs.length - 3} more`] : xs).join('; ');
  const findings = [
    ...(h.broken.length > 0 ? [`key records broken, their later keys refused: ${said(h.broken.map((b) => `${b.node} (${b.reason})`))}`] : []),
    ...(h.resets.length > 0 ? [`a new identity (the key was replaced without the old one): ${said(h.resets.map((r) => `${r.node} since ${new Date(r.since).toISOString()}`))}`] : []),
  ];
  if (findings.length > 0) return { name: 'keys', status: 'warn', detail: findings.join('; '), fix: 'attend keys (shows the record); a reset is expected only after a key was lost' };
  return { name: 'keys', status: 'ok', detail: `${h.nodes} ${h.nodes === 1 ? 'node' : 'nodes'} anchored in ${keysDir} (private)`, fix: null };
}

/** Which conduit delivers to this session while the model works, and why (issue 21 §2). */
function conduitCheck(ctx: Ctx, id: string, claudePid: number | undefined, now: number): Check {
  // This session's two conduit heartbeats, not every party's (it does not grow with the live).
  const fresh = (p: PresenceRecord | null) => (p && isFresh(p, now) ? p : undefined);
  const sensor = fresh(readPresenceOf(ctx.paths.root, id, 'sensor'));
  const deliverer = fresh(readPresenceOf(ctx.paths.root, id, 'deliverer'));
  const holds = socketHolds(ctx, claudePid).map((h) => h.why);
  if (sensor) return { name: 'conduit', status: 'ok', detail: `the sensor: attend run is live${sensor.pid ? ` (pid ${sensor.pid})` : ''}, under a monitor`, fix: null };
  if (deliverer) {
    return holds.length > 0
      ? { name: 'conduit', status: 'warn', detail: `the deliverer: attend deliver is live${deliverer.pid ? ` (pid ${deliverer.pid})` : ''}, but its posts may be held: ${holds.join('; ')}`, fix: 'allow cross-session messages (crossSessionInbound), or arm the Monitor tool with command `attend run`' }
      : { name: 'conduit', status: 'ok', detail: `the deliverer: attend deliver is live${deliverer.pid ? ` (pid ${deliverer.pid})` : ''}, posting to the session's inbox socket`, fix: null };
  }
  let why = '';
  if (claudePid !== undefined) {
    try {
      const last = readFileSync(delivererLog(ctx.paths.root, claudePid), 'utf8').trim().split('\n').pop();
      if (last) why = `; the deliverer stopped: ${last}`;
    } catch {
      // never ran, or left nothing to say
    }
  }
  if (holds.length > 0) why += `; socket posts are held here: ${holds.join('; ')}`;
  if (!ctx.env.CLAUDE_CODE_MESSAGING_SOCKET) why += '; this Claude Code has no inbox socket (2.1.332 or later has one)';
  return { name: 'conduit', status: 'warn', detail: `nothing live delivers to this session; messages arrive only at the end of a turn${why}`, fix: 'arm the Monitor tool with command `attend run` (the plugin does this in interactive sessions; the SessionStart hook starts attend deliver otherwise)' };
}

/**
 * Which policy is in force (issue 20). A bus with no policy file runs the default, groups,
 * which is not what an older attend did there: the check says so, and how to get that back.
 */
function policyCheck(root: string): Check {
  const r = readPolicy(root);
  if (!r.ok) return { name: 'policy', status: 'fail', detail: `${r.error}; nothing is delivered until it parses`, fix: `fix or remove ${policyFile(root)}` };
  const p = r.policy;
  const mode =
    p.mode === 'groups' ? 'groups: a parent and its direct children talk; across groups only with a grant (attend allow)' : 'family: every session and person of this bus reaches every other';
  const rest = `#open: ${p.open} may post; ${p.allow.length} grant${p.allow.length === 1 ? '' : 's'}, ${p.deny.length} den${p.deny.length === 1 ? 'y' : 'ies'}`;
  if (r.exists) return { name: 'policy', status: 'ok', detail: `${mode}; ${rest} (${policyFile(root)})`, fix: null };
  return {
    name: 'policy',
    status: 'ok',
    detail: `${mode}; ${rest} (the default: no ${policyFile(root)}). An older attend let every node of a bus without a policy file reach every other; ${FAMILY_POLICY_COMMAND} brings that back`,
    fix: null,
  };
}

/** What `attend doctor` prints, on the full CLI and its fast path (fast-doctor.ts) alike; exit 5 when a check fails. */
export function printDoctor(io: Io, r: DoctorResult, json: boolean): void {
  if (!r.ok) io.setExitCode(EXIT.environment);
  if (json) return io.json(r);
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  for (const c of r.checks) {
    io.out(`${mark[c.status]}  ${c.name}: ${c.detail}`);
    if (c.fix) io.out(`      fix: ${c.fix}`);
  }
}
