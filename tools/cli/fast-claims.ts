// The PreToolUse hook (issue 23 §2): before an Edit, Write, MultiEdit or NotebookEdit (and a
// `git commit` through Bash), tell the model when another live party claims a file the call
// changes: who, why, and how to ask them. It runs before every edit, so it stays within 1.3×
// `node -e 0`: no commander, no verb context, no zod; postbuild bundles it into
// fast-claims.cjs. It never fails the call: whatever goes wrong, it says nothing and exits 0.
//
// Claude Code's PreToolUse contract: `hookSpecificOutput.additionalContext` reaches the model
// and the call goes ahead; `permissionDecision: "ask"` asks the person; `"deny"` refuses the
// call and shows the model `permissionDecisionReason`. The policy's `claims` picks one.

import { writeSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { readClaimsMode } from '../bus/trust/index.js';
import { checkFiles, holdWarning } from '../verbs/claims-check.js';
import { resolvePaths } from '../verbs/env.js';
import { readHookStdinSync } from './hook-stdin.js';

const EDIT_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);

interface PreToolUsePayload {
  session_id?: unknown;
  cwd?: unknown;
  tool_name?: unknown;
  tool_input?: { file_path?: unknown; notebook_path?: unknown; command?: unknown };
}

export function parseFastClaimsHook(argv: string[]): boolean {
  return argv.length === 2 && argv[0] === 'hook' && argv[1] === 'pre-tool-use';
}

const GIT_COMMIT = /(^|[\s;&|(])git(\s+-[cC]\s+\S+)*\s+commit\b/;

/** The files a `git commit` would record: what is staged, and with -a the tracked changes too. */
function commitFiles(command: string, cwd: string): string[] {
  // Only a `git commit` needs git: child_process loads here, off the path of every edit.
  const { spawnSync } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
  const git = (args: string[]) => spawnSync('git', ['-C', cwd, ...args], { encoding: 'utf8', timeout: 3_000, stdio: ['ignore', 'pipe', 'ignore'] });
  const top = git(['rev-parse', '--show-toplevel']);
  if (top.status !== 0) return [];
  const root = top.stdout.trim();
  const all = /\scommit\b[^;&|]*\s(-[a-zA-Z]*a[a-zA-Z]*|--all)\b/.test(command);
  const names = new Set<string>();
  for (const args of all ? [['diff', '--cached', '--name-only', '-z'], ['diff', '--name-only', '-z']] : [['diff', '--cached', '--name-only', '-z']]) {
    const r = git(args);
    if (r.status === 0) for (const n of r.stdout.split('\0')) if (n) names.add(join(root, n));
  }
  return [...names];
}

/** The files a tool call would change, as Claude Code's payload names them. */
export function changedFiles(payload: PreToolUsePayload, cwd: string): string[] {
  const tool = payload.tool_name;
  const input = payload.tool_input ?? {};
  if (typeof tool !== 'string') return [];
  if (EDIT_TOOLS.has(tool)) {
    const p = tool === 'NotebookEdit' ? (input.notebook_path ?? input.file_path) : input.file_path;
    return typeof p === 'string' && p.length > 0 ? [p] : [];
  }
  if (tool === 'Bash' && typeof input.command === 'string' && GIT_COMMIT.test(input.command)) return commitFiles(input.command, cwd);
  return [];
}

/** What the hook prints for this payload: nothing, or Claude Code's PreToolUse JSON. */
export function preToolUseOutput(text: string, env: Readonly<Record<string, string | undefined>>, fallbackCwd: string, now: number): string {
  let payload: PreToolUsePayload;
  try {
    payload = JSON.parse(text) as PreToolUsePayload;
  } catch {
    return '';
  }
  if (typeof payload !== 'object' || payload === null) return '';
  const cwd = typeof payload.cwd === 'string' && isAbsolute(payload.cwd) ? payload.cwd : fallbackCwd;
  const files = changedFiles(payload, cwd);
  if (files.length === 0) return '';
  const root = resolvePaths(env).root;
  // The editor is the session the payload names (Claude Code's own id for it): its own claims hold nothing against it.
  const me = typeof payload.session_id === 'string' ? payload.session_id : (env.CLAUDE_CODE_SESSION_ID ?? null);
  const held = checkFiles(root, files, { cwd, me, now }).filter((h) => h.claims.length > 0);
  if (held.length === 0) return '';
  const mode = readClaimsMode(root);
  const words = holdWarning(held, now, mode);
  const out =
    mode === 'warn'
      ? { hookEventName: 'PreToolUse', additionalContext: words }
      : { hookEventName: 'PreToolUse', permissionDecision: mode, permissionDecisionReason: words };
  return JSON.stringify({ hookSpecificOutput: out });
}

/**
 * Straight to fd 1: the first touch of process.stdout builds a stream (a pipe's is a socket)
 * and loads node:net and the stream modules, ~5 ms of a hook that runs before every edit.
 * A pipe that will not take it all at once (EAGAIN) gets the rest through the stream.
 */
function writeOut(text: string): void {
  const buf = Buffer.from(text, 'utf8');
  let at = 0;
  try {
    while (at < buf.length) at += writeSync(1, buf, at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    process.stdout.write(buf.subarray(at));
  }
}

export function runPreToolUseHook(): number {
  try {
    const text = readHookStdinSync(0);
    const out = preToolUseOutput(text, process.env, process.cwd(), Date.now());
    if (out) writeOut(`${out}\n`);
  } catch (err) {
    // A hook never stands in the way of the call it checks.
    process.stderr.write(`attend hook pre-tool-use: ${String((err as Error)?.message ?? err).replace(/\s*\n\s*/g, ' ')}; continuing\n`);
  }
  return 0;
}
