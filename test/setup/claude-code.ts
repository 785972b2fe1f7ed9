// Global setup of the e2e tier: the pinned Claude Code its real-client tests drive, installed
// into .tools/claude-code by scripts/install-claude-code.sh the first time the tier runs and
// kept there (the script does nothing when the pinned version is in place). The unit and slow
// tiers never need it. ATTEND_CLAUDE_BIN names another binary and skips the install.

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  if (process.env.ATTEND_CLAUDE_BIN) return;
  const script = fileURLToPath(new URL('../../scripts/install-claude-code.sh', import.meta.url));
  execFileSync(script, { stdio: ['ignore', 'inherit', 'inherit'] });
}
