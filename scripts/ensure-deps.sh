#!/usr/bin/env bash
# Installs the npm dependencies exactly as locked (postinstall applies patches/),
# with the pinned Node 24 (scripts/install/node.sh), when node_modules is missing
# or was installed from another lock file, patch set or Node version (native
# addons are built for one Node ABI). npm's own cache (~/.npm) keeps repeat
# installs fast.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install/use-node.sh

stamp=node_modules/.docservice-lock-sha256
wanted="$({ node --version; cat package-lock.json patches/*.patch; } | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$wanted" ]]; then
  echo "installing npm dependencies (npm ci, Node $(node --version))" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$wanted" > "$stamp"
fi
