#!/usr/bin/env bash
# `npm start`: installs what is missing, then runs every service in one process
# with embedded defaults (see README.md for the settings).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
exec node --import tsx services/main.ts "${1:-all}"
