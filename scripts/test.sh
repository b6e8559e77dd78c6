#!/usr/bin/env bash
# `npm test`: prepares the test environment (real Redis, Mailpit, ...), checks
# generated code and types, then runs every unit and integration test, all on
# the pinned Node 24 the platform ships with (scripts/install/node.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/install/use-node.sh
echo "node $(node --version) from $(command -v node)"
bash scripts/ensure-deps.sh
bash scripts/testenv/setup.sh
bash scripts/check-generated.sh
npx tsc -p tsconfig.json
echo "types check"
node --import tsx scripts/release-check.ts
node --import tsx scripts/third-party-licenses.ts check

mapfile -t tests < <(find services test clients operator -name '*.test.ts' -not -path '*/node_modules/*' | sort)
# A test that hangs fails after 15 minutes (the slowest suite, the Kubernetes
# node's, takes about 5), and a file whose tests are done exits even if a
# client it left open would keep it alive: either would otherwise hold the
# whole run until CI's limit, without saying which test it was.
node --import tsx --test --test-reporter=spec --test-timeout=900000 --test-force-exit "${tests[@]}"
