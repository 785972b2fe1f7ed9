#!/usr/bin/env bash
# Installs the pinned Codex and Gemini CLI the real-agent e2e tests drive (test/e2e/agent-clis.test.ts),
# into $ATTEND_TOOLS_DIR (default .tools/) as codex/ and gemini-cli/, and keeps them there: the e2e
# tier's global setup (test/setup/claude-code.ts) runs this at every start, and it does nothing
# when the pinned versions are in place.
# Kept out of package.json on purpose: they are test fixtures, not dependencies. Codex's
# native binary ships inside the registry package @openai/codex@<version>-linux-x64 (the
# optional dependency @openai/codex-linux-x64), so --ignore-scripts loses nothing; the tests
# run the JS launcher (bin/codex.js), which execs that binary, as `codex` on a user's PATH does.
# Gemini CLI is one bundled JS file (bundle/gemini.js, engines node>=20).
set -euo pipefail
cd "$(dirname "$0")/.."
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
GEMINI_VERSION="${GEMINI_CLI_VERSION:-0.61.0}"
TOOLS="${ATTEND_TOOLS_DIR:-.tools}"

. scripts/lib/install-pinned.sh
install_pinned "$TOOLS/codex" @openai/codex "$CODEX_VERSION" "@openai/codex-linux-*/vendor/*/bin/codex"
install_pinned "$TOOLS/gemini-cli" @google/gemini-cli "$GEMINI_VERSION" "@google/gemini-cli/bundle/gemini.js"
