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

# install <dir> <package> <version> <file that must exist once installed>
install() {
  local dest="$TOOLS/$1" pkg="$2" version="$3" probe="$4"
  local manifest="$dest/node_modules/$pkg/package.json"
  if [ -f "$manifest" ] && [ "$(node -p 'require(process.argv[1]).version' "$(realpath "$manifest")")" = "$version" ] &&
     compgen -G "$dest/node_modules/$probe" >/dev/null; then
    return 0
  fi
  mkdir -p "$dest"
  [ -f "$dest/package.json" ] || echo '{"private":true}' > "$dest/package.json"
  npm install --prefix "$dest" --no-save --ignore-scripts --no-audit --no-fund --engine-strict=false \
    "$pkg@$version" >&2
  if ! compgen -G "$dest/node_modules/$probe" >/dev/null; then
    echo "install-agent-clis: $pkg@$version installed but $dest/node_modules/$probe is missing" >&2
    exit 1
  fi
}

install codex @openai/codex "$CODEX_VERSION" "@openai/codex-linux-*/vendor/*/bin/codex"
install gemini-cli @google/gemini-cli "$GEMINI_VERSION" "@google/gemini-cli/bundle/gemini.js"
