#!/usr/bin/env bash
# Runs a command with the pinned Node 24 first on PATH (scripts/install/use-node.sh),
# for npm scripts: `npm run` keeps the PATH of whatever Node started npm, and the
# native addons in node_modules are built for Node 24 only.
#   bash scripts/with-node.sh node --import tsx bench/auth.bench.ts
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/install/use-node.sh"
exec "$@"
