#!/usr/bin/env bash
# `npm start`: installs what is missing (npm packages, LibreOffice, unoserver),
# then runs every service in one process with embedded defaults (see README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/install/runtime.sh >&2
exec node --import tsx services/main.ts "${1:-all}"
