// The proof of the PreToolUse claim check (issue 23 §2, Done means): a real Claude Code with
// attend installed, whose scripted model edits a file another session claimed, is told who
// holds it, why and how to ask them, in its next request; its edit of an unclaimed file is
// not. The other session is a live process with its Claude Code record that ran `attend claim`.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bus.js';
import { type ClaudeHome, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type ApiRequest, type FakeAnthropic, conversationText, startFakeAnthropic, toolResults } from '../helpers/fake-anthropic.js';
import { sessionTree } from '../helpers/session-tree.js';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
let tree: ReturnType<typeof sessionTree> | undefined;
afterEach(async () => {
  tree?.stop();
  await api?.close();
  home?.cleanup();
  home = api = tree = undefined;
});

const WARNING = 'another live party has claimed a file';

describe('claude code: the PreToolUse hook and file claims', () => {
  it('an Edit of a file another session claimed brings the warning to the model; an Edit of an unclaimed file does not', async () => {
    const h = (home = makeClaudeHome());
    const claimed = join(h.project, 'parser.ts');
    const free = join(h.project, 'lexer.ts');
    writeFileSync(claimed, 'export const parser = 1;\n');
    writeFileSync(free, 'export const lexer = 1;\n');
    for (const args of [['init', '-q'], ['add', '-A'], ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'root']]) {
      expect(spawnSync('git', args, { cwd: h.project }).status).toBe(0);
    }
    // The other session: a live process with its record, whose Bash tool runs `attend claim`.
    mkdirSync(join(h.claudeDir, 'sessions'), { recursive: true });
    const base = h.env({ baseUrl: 'http://127.0.0.1:9' });
    tree = sessionTree({ dir: h.dir, root: h.root, claudeDir: h.claudeDir, home: h.home, env: { ...base, CLAUDE_CONFIG_DIR: h.claudeDir }, cleanup: () => {} });
    const other = await tree.lead('parser-owner');
    const claim = await other.run(['claim', claimed, '--reason', 'rewriting the parser']);
    expect(claim.exitCode, claim.stderr).toBe(0);

    // The model: read and edit the claimed file, then read and edit the free one, then stop.
    const steps: Record<string, unknown>[] = [
      { tool: 'Read', input: { file_path: claimed } },
      { tool: 'Edit', input: { file_path: claimed, old_string: 'parser = 1', new_string: 'parser = 2' } },
      { tool: 'Read', input: { file_path: free } },
      { tool: 'Edit', input: { file_path: free, old_string: 'lexer = 1', new_string: 'lexer = 2' } },
    ];
    const main: ApiRequest[] = [];
    api = await startFakeAnthropic((req, { main: isMain }) => {
      if (!isMain) return { text: 'ok' };
      main.push(req);
      const n = toolResults(req).length;
      return (steps[n] as { tool: string; input: Record<string, unknown> } | undefined) ?? { text: 'done' };
    });
    const env = h.env({ baseUrl: api.url });
    const install = runBin(['install'], { env, cwd: h.project });
    expect(install.exitCode, install.stderr).toBe(0);
    const run = runClaude(['-p', 'go', '--allowedTools', 'Read,Edit', '--output-format', 'json'], { env, cwd: h.project });
    const code = await run.exited(90_000);
    expect(code, run.stderr()).toBe(0);

    // The request after each step: [after Read, after Edit(claimed), after Read, after Edit(free)].
    const after = (step: number) => main.find((r) => toolResults(r).length === step + 1) as ApiRequest;
    expect(after(3), 'the model made every step').toBeDefined();
    const seen = (r: ApiRequest) => conversationText(r).split(WARNING).length - 1;
    // Nothing before the claimed file's Edit; after it, the warning with who, why and how to ask.
    expect(seen(after(0))).toBe(0);
    expect(seen(after(1))).toBe(1);
    const text = conversationText(after(1));
    expect(text).toContain('parser-owner');
    expect(text).toContain('rewriting the parser');
    expect(text).toContain('attend send --to "parser-owner"');
    // The edit of the free file brought no second warning.
    expect(seen(after(3))).toBe(1);
    // Advisory: both edits went ahead.
    expect(readFileSync(claimed, 'utf8')).toContain('parser = 2');
    expect(readFileSync(free, 'utf8')).toContain('lexer = 2');
  });
});
