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

# The Kubernetes end-to-end file first: it is the longest, and much of it is
# waiting on pods, which the other files fill. Two files run at a time (a
# serial run leaves a third of the cores idle, waiting on LibreOffice, Kafka
# and the API server); the two files that start a Kubernetes node take turns
# on it (test/support/kube-node-host.ts).
mapfile -t tests < <(echo test/e2e/kubernetes.test.ts; find services test clients operator -name '*.test.ts' -not -path '*/node_modules/*' -not -path test/e2e/kubernetes.test.ts | sort)
# A test that hangs fails after 15 minutes (the slowest suite, the Kubernetes
# node's, takes about 6), and a file whose tests are done exits even if a
# client it left open would keep it alive: either would otherwise hold the
# whole run until CI's limit, without saying which test it was. Each file's
# process writes its results to the runner blocking (scripts/test-child-stdout.ts):
# with --test-force-exit, what the runner had not read yet was lost, and the run
# stayed green with fewer tests (nodejs/node#64833).
node --import tsx --import ./scripts/test-child-stdout.ts --test --test-reporter=spec --test-concurrency=2 --test-timeout=900000 --test-force-exit "${tests[@]}"
