// File claims over real processes (issue 23 §2): sessions that are live processes with their
// Claude Code records, a real git repository with a linked worktree, the built `attend`.
// Two worktrees of one repository are one project; a claim from a party that is gone does not
// hold; a claim ends with its TTL; `attend claims --check` exits 0 free, 7 held; the
// PreToolUse hook (the bundled fast path, attend.cjs) tells an editor who holds the file.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../tools/wire/errors.js';
import { type RunResult, type TempBus, makeTempBus, runBin, waitFor } from '../helpers/bus.js';
import { type SessionProc, sessionTree } from '../helpers/session-tree.js';

const ATTEND_CJS = fileURLToPath(new URL('../../dist/tools/cli/attend.cjs', import.meta.url));

let bus: TempBus;
let tree: ReturnType<typeof sessionTree>;
let ann: SessionProc;
let bob: SessionProc;
let main: string;
let linked: string;

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
};

beforeEach(async () => {
  bus = makeTempBus();
  tree = sessionTree(bus);
  main = join(bus.dir, 'repo');
  linked = join(bus.dir, 'repo-linked');
  mkdirSync(join(main, 'src'), { recursive: true });
  git(main, 'init', '-q');
  writeFileSync(join(main, 'src', 'parser.ts'), 'export {};\n');
  writeFileSync(join(main, 'src', 'lexer.ts'), 'export {};\n');
  git(main, 'add', '-A');
  git(main, 'commit', '-qm', 'root');
  git(main, 'worktree', 'add', '-q', linked);
  [ann, bob] = await Promise.all([tree.lead('ann'), tree.lead('bob')]);
}, 60_000);
afterEach(() => {
  tree.stop();
  bus.cleanup();
});

const code = (r: RunResult) => r.exitCode;
const ok = (r: RunResult) => {
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
};

/** The PreToolUse hook as Claude Code runs it for `s`: the payload on stdin, through the bundled fast path. */
function preToolUse(s: SessionProc, tool: string, input: Record<string, unknown>): string {
  const payload = { session_id: s.sessionId, cwd: s.cwd, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input };
  const r = spawnSync(process.execPath, [ATTEND_CJS, 'hook', 'pre-tool-use'], { env: { ...bus.env, CLAUDE_CODE_SESSION_ID: s.sessionId }, input: JSON.stringify(payload), encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe('claims across worktrees', () => {
  it('a claim in one worktree holds in the other: check exits 7 there with who and why, 0 for its holder and for another file', async () => {
    ok(await ann.run(['claim', join(main, 'src', 'parser.ts'), '--reason', 'rewriting the tokenizer']));
    const held = await bob.run(['claims', '--check', join(linked, 'src', 'parser.ts')]);
    expect(code(held), held.stderr).toBe(EXIT.held);
    expect(held.stdout).toMatch(/ann \(agent, session 5e55/);
    expect(held.stdout).toContain('rewriting the tokenizer');
    expect(held.stdout).toContain('attend send --to "ann"');
    expect(code(await bob.run(['claims', '--check', join(linked, 'src', 'lexer.ts')]))).toBe(0);
    expect(code(await ann.run(['claims', '--check', join(linked, 'src', 'parser.ts')]))).toBe(0);
    // Claiming what another holds claims nothing and says who holds it.
    const refused = await bob.run(['claim', join(linked, 'src'), join(linked, 'README.md')]);
    expect(code(refused)).toBe(EXIT.held);
    expect(refused.stderr).toMatch(/ann .* holds src\/parser\.ts.*nothing was claimed/);
    const listed = JSON.parse(ok(await bob.run(['claims', '--json']))) as { claims: { pattern: string; holder: { id: string }; mine: boolean }[] };
    expect(listed.claims.map((c) => [c.pattern, c.holder.id, c.mine])).toEqual([['src/parser.ts', ann.sessionId, false]]);
    // `attend peers` shows what each holds.
    expect(ok(await bob.run(['peers']))).toMatch(/ann holds src\/parser\.ts/);
    const peers = JSON.parse(ok(await bob.run(['peers', '--json']))) as { peers: { id: string; holds: string[] }[] };
    expect(peers.peers.find((p) => p.id === ann.sessionId)?.holds).toEqual(['src/parser.ts']);
    // Released, the file is free.
    expect(ok(await ann.run(['release']))).toContain('released src/parser.ts');
    expect(code(await bob.run(['claims', '--check', join(linked, 'src', 'parser.ts')]))).toBe(0);
  });

  it('a glob claims what it matches, in every worktree', async () => {
    ok(await ann.sh(`cd ${JSON.stringify(linked)} && "$NODE_BIN" "$ATTEND_BIN" claim 'src/*.ts' --reason split`));
    expect(code(await bob.run(['claims', '--check', join(main, 'src', 'lexer.ts')]))).toBe(EXIT.held);
    expect(code(await bob.run(['claims', '--check', join(main, 'README.md')]))).toBe(0);
  });
});

describe('when a claim stops holding', () => {
  it('a claim whose holder is gone does not hold', async () => {
    ok(await ann.run(['claim', join(main, 'src', 'parser.ts')]));
    expect(code(await bob.run(['claims', '--check', join(main, 'src', 'parser.ts')]))).toBe(EXIT.held);
    process.kill(ann.pid, 'SIGTERM');
    await waitFor(async () => code(await bob.run(['claims', '--check', join(main, 'src', 'parser.ts')])) === 0 || null, { what: 'the claim of a gone session to stop holding', timeoutMs: 15_000 });
    expect(ok(await bob.run(['claims']))).toContain('No claims hold');
    // And the file can be claimed by the one who is still here.
    ok(await bob.run(['claim', join(main, 'src', 'parser.ts')]));
  });

  it('a claim ends with its TTL', async () => {
    ok(await ann.run(['claim', join(main, 'src', 'parser.ts'), '--ttl', '2s']));
    expect(code(await bob.run(['claims', '--check', join(main, 'src', 'parser.ts')]))).toBe(EXIT.held);
    await waitFor(async () => code(await bob.run(['claims', '--check', join(main, 'src', 'parser.ts')])) === 0 || null, { what: 'the claim to expire', timeoutMs: 15_000 });
  });

  it('a bad TTL is a usage error and claims nothing', async () => {
    const r = await ann.run(['claim', join(main, 'src', 'parser.ts'), '--ttl', 'forever']);
    expect(code(r)).toBe(EXIT.usage);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(ok(await bob.run(['claims']))).toContain('No claims hold');
  });
});

describe('the PreToolUse hook', () => {
  it('tells an editor of a claimed file who holds it, why and how to ask; says nothing for a free file, the holder, or a read', async () => {
    ok(await ann.run(['claim', join(main, 'src', 'parser.ts'), '--reason', 'rewriting the tokenizer']));
    const out = JSON.parse(preToolUse(bob, 'Edit', { file_path: join(linked, 'src', 'parser.ts'), old_string: 'a', new_string: 'b' })) as { hookSpecificOutput: Record<string, string> };
    expect(out.hookSpecificOutput.hookEventName).toBe('PreToolUse');
    expect(out.hookSpecificOutput.permissionDecision).toBeUndefined();
    expect(out.hookSpecificOutput.additionalContext).toContain('ann (agent');
    expect(out.hookSpecificOutput.additionalContext).toContain('rewriting the tokenizer');
    expect(out.hookSpecificOutput.additionalContext).toContain('attend send --to "ann"');
    expect(preToolUse(bob, 'Write', { file_path: join(linked, 'src', 'lexer.ts'), content: 'x' })).toBe('');
    expect(preToolUse(ann, 'Edit', { file_path: join(linked, 'src', 'parser.ts') })).toBe('');
    expect(preToolUse(bob, 'Read', { file_path: join(linked, 'src', 'parser.ts') })).toBe('');
    // A `git commit` of a staged claimed file is told too; one of an unclaimed file is not.
    writeFileSync(join(linked, 'src', 'parser.ts'), 'export const x = 1;\n');
    git(linked, 'add', 'src/parser.ts');
    const bobInLinked = { ...bob, cwd: linked };
    expect(preToolUse(bobInLinked, 'Bash', { command: 'git commit -m "tokenizer"' })).toContain('src/parser.ts');
    git(linked, 'reset', '-q');
    expect(preToolUse(bobInLinked, 'Bash', { command: 'git commit -m "nothing staged"' })).toBe('');
  });

  it('the person can make it a hard stop (attend policy --claims deny), or ask them (ask)', async () => {
    ok(await ann.run(['claim', join(main, 'src')]));
    ok(runBin(['policy', '--claims', 'deny'], { env: bus.env }));
    const denied = JSON.parse(preToolUse(bob, 'MultiEdit', { file_path: join(main, 'src', 'lexer.ts'), edits: [] })) as { hookSpecificOutput: Record<string, string> };
    expect(denied.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(denied.hookSpecificOutput.permissionDecisionReason).toContain('the call was not run');
    ok(runBin(['policy', '--claims', 'ask'], { env: bus.env }));
    const asked = JSON.parse(preToolUse(bob, 'NotebookEdit', { notebook_path: join(main, 'src', 'n.ipynb') })) as { hookSpecificOutput: Record<string, string> };
    expect(asked.hookSpecificOutput.permissionDecision).toBe('ask');
    // A session cannot change the policy.
    expect(code(await bob.run(['policy', '--claims', 'warn']))).toBe(EXIT.refused);
  });

  it('bad input never stands in the way: a payload that is not JSON, or names no file, prints nothing and exits 0', () => {
    for (const input of ['not json', '{}', '{"tool_name":"Edit","tool_input":{}}', '[1,2]']) {
      const r = spawnSync(process.execPath, [ATTEND_CJS, 'hook', 'pre-tool-use'], { env: bus.env, input, encoding: 'utf8' });
      expect([r.status, r.stdout], input).toEqual([0, '']);
    }
  });
});
