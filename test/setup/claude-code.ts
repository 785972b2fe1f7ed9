// Global setup of the e2e tier: the pinned agent CLIs its real-client tests drive, installed
// the first time the tier runs and kept there (each script does nothing when the pinned version
// is in place): Claude Code into .tools/claude-code by scripts/install-claude-code.sh, Codex and
// Gemini CLI into $ATTEND_TOOLS_DIR (default .tools/) by scripts/install-agent-clis.sh. The unit
// and slow tiers never need them. ATTEND_CLAUDE_BIN names another Claude Code and skips its
// install. A failed install fails the tier, with the script's own message on stderr.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function run(name: string): void {
  execFileSync(fileURLToPath(new URL(`../../scripts/${name}`, import.meta.url)), { stdio: ['ignore', 'inherit', 'inherit'] });
}

export default function setup(): void {
  if (!process.env.ATTEND_CLAUDE_BIN) run('install-claude-code.sh');
  run('install-agent-clis.sh');
}
