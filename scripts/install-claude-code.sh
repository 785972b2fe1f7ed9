#!/usr/bin/env bash
# Installs the pinned Claude Code the real-client e2e tests drive, into .tools/claude-code, and
# keeps it there: the e2e tier's global setup (test/setup/claude-code.ts) runs this at every
# start, and it does nothing when the pinned version and its native binary are in place.
# Kept out of package.json on purpose: it is a 400 MB test fixture, not a dependency, and its
# engines field says node>=22 while attend runs on 20. The native binary ships inside the
# registry package @anthropic-ai/claude-code-linux-x64, so --ignore-scripts loses nothing:
# the tests run that binary directly instead of the wrapper the postinstall would patch.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${CLAUDE_CODE_VERSION:-2.1.332}"
. scripts/lib/install-pinned.sh
install_pinned .tools/claude-code @anthropic-ai/claude-code "$VERSION" "@anthropic-ai/claude-code-*/claude"
