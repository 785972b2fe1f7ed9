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
DEST=.tools/claude-code
if [ -f "$DEST/node_modules/@anthropic-ai/claude-code/package.json" ] &&
   grep -q "\"version\": \"$VERSION\"" "$DEST/node_modules/@anthropic-ai/claude-code/package.json" &&
   compgen -G "$DEST/node_modules/@anthropic-ai/claude-code-*/claude" >/dev/null; then
  exit 0
fi
mkdir -p "$DEST"
[ -f "$DEST/package.json" ] || echo '{"private":true}' > "$DEST/package.json"
npm install --prefix "$DEST" --no-save --ignore-scripts --no-audit --no-fund --engine-strict=false \
  "@anthropic-ai/claude-code@$VERSION" >&2
