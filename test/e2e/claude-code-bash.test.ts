// The real Claude Code: a Bash tool call `attend send` inside session A writes a line whose
// from_id is A's session_id and whose from_kind is agent (issue #6, Must have 5).

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSignal } from '../../tools/wire/envelope.js';
import { type ClaudeHome, makeClaudeHome, runClaude } from '../helpers/claude-code.js';
import { type FakeAnthropic, lastText, startFakeAnthropic, toolResultCount } from '../helpers/fake-anthropic.js';

let home: ClaudeHome | undefined;
let api: FakeAnthropic | undefined;
afterEach(async () => {
  await api?.close();
  home?.cleanup();
  home = api = undefined;
});

describe('claude code: attend send from the Bash tool', () => {
  it('writes an envelope carrying the session id as from_id and agent as from_kind', async () => {
    home = makeClaudeHome();
    api = await startFakeAnthropic((req) =>
      toolResultCount(req) === 0
        ? { tool: 'Bash', input: { command: 'attend send "hello from a real session" && echo SENT-OK', description: 'send' } }
        : { text: 'done' },
    );
    const run = runClaude(['-p', 'go', '--allowedTools', 'Bash', '--output-format', 'json'], { env: home.env({ baseUrl: api.url }), cwd: home.project });
    const code = await run.exited(90_000);
    expect(code, run.stderr()).toBe(0);
    const result = JSON.parse(run.stdout()) as { session_id: string };
    expect(lastText(api.requests.at(-1)!)).toContain('SENT-OK');
    const dir = join(home.root, 'signals', '_broadcast');
    const files = readdirSync(dir).filter((f) => f.endsWith('.signal'));
    expect(files).toHaveLength(1);
    const env = parseSignal(readFileSync(join(dir, files[0]!), 'utf8').trimEnd());
    expect(env).toMatchObject({ fromKind: 'agent', fromId: result.session_id, from: `claude:${result.session_id}`, to: '*', body: 'hello from a real session' });
  });
});
