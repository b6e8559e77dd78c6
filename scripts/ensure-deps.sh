#!/usr/bin/env bash
# Installs the npm dependencies exactly as locked (postinstall applies patches/),
# when node_modules is missing or was installed from another lock file or patch set.
# npm's own cache (~/.npm) keeps repeat installs fast.
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=node_modules/.docservice-lock-sha256
wanted="$(cat package-lock.json patches/*.patch | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$wanted" ]]; then
  echo "installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$wanted" > "$stamp"
fi
