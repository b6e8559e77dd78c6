#!/usr/bin/env bash
# `npm start`: installs what is missing (Node 24, npm packages, LibreOffice,
# unoserver), then runs every service in one process with embedded defaults
# (see docs/getting-started.md), on the pinned Node 24 whatever Node started npm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install/use-node.sh
bash scripts/ensure-deps.sh
bash scripts/install/runtime.sh >&2
exec node --import tsx services/main.ts "${1:-all}"
