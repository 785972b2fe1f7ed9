#!/bin/sh
# Runs attend for the plugin's hooks, monitor and MCP server: the plugin's own build when it has one,
# else a global `attend`. Without either it does nothing, quietly (issue #6 §1). A hook must
# never block the session, so any failure becomes exit 0: Claude Code reads exit 2 from a Stop
# hook as "block", and an old attend without `hook` would exit 2 on the unknown command.
verb="${1:-}"
root="${CLAUDE_PLUGIN_ROOT:-$(dirname "$0")/..}"
if [ -f "$root/dist/tools/cli/attend.cjs" ] && command -v node >/dev/null 2>&1; then
  set -- node "$root/dist/tools/cli/attend.cjs"
elif command -v attend >/dev/null 2>&1; then
  set -- attend
else
  exit 0
fi
case "$verb" in
  run|mcp) exec "$@" "$verb" ;;
  session-start|session-end|stop|pre-tool-use) "$@" hook "$verb" || true ;;
  *) echo "run-attend: unknown verb '$verb'" >&2 ;;
esac
exit 0
