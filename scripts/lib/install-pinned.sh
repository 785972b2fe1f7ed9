# Sourced by scripts/install-claude-code.sh and scripts/install-agent-clis.sh: installs a pinned
# test fixture from the npm registry into its own prefix, and does nothing when it is in place.
# install_pinned <dest dir> <package> <version> <glob under node_modules that must exist once installed>
install_pinned() {
  local dest="$1" pkg="$2" version="$3" probe="$4"
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
    echo "install-pinned: $pkg@$version installed but $dest/node_modules/$probe is missing" >&2
    exit 1
  fi
}
