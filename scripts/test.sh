#!/usr/bin/env bash
# `npm test`: prepares the test environment (real Redis, Mailpit, ...), checks
# generated code and types, then runs every unit and integration test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-deps.sh
bash scripts/testenv/setup.sh
bash scripts/check-generated.sh
npx tsc -p tsconfig.json
echo "types check"

mapfile -t tests < <(find services test clients operator -name '*.test.ts' -not -path '*/node_modules/*' | sort)
node --import tsx --test --test-reporter=spec "${tests[@]}"
