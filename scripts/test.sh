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

# The checks before the tests run side by side (each keeps one core busy);
# each one's output is printed whole, in this order. The build is the code the
# tests start the platform's processes from (test/support/compiled-platform.ts).
checks=(
  "bash scripts/check-generated.sh"
  "npx tsc -p tsconfig.json && echo 'types check'"
  "node scripts/build.mjs --when-stale"
  "node --import tsx scripts/release-check.ts"
  "node --import tsx scripts/third-party-licenses.ts check"
)
outputs="$(mktemp -d)"
pids=()
for i in "${!checks[@]}"; do
  bash -c "${checks[$i]}" > "$outputs/$i" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!checks[@]}"; do
  wait "${pids[$i]}" || failed=1
  cat "$outputs/$i"
done
rm -rf "$outputs"
[[ $failed -eq 0 ]] || { echo "a check before the tests failed (above)" >&2; exit 1; }

# Three files run at a time (with two, a fifth of the two cores stayed idle,
# the files waiting on LibreOffice, Kafka and the API server; with four, a load
# test's thresholds broke): the files under test/ (end-to-end and integration,
# up to minutes each) first, then the unit files of services/, clients/ and
# operator/ (seconds each), which end the run with both cores busy
# (scripts/run-tests.ts keeps this order). The two files that start a
# Kubernetes node take turns on it (test/support/kube-node-host.ts), and a load
# test has the machine to itself while it runs (test/support/machine-share.ts,
# loaded into each file).
mapfile -t tests < <(
  find test -name '*.test.ts' | sort
  find services clients operator -name '*.test.ts' -not -path '*/node_modules/*' | sort
)
# Each file's process writes its results to the runner blocking
# (scripts/test-child-stdout.ts): with the runner's forced exit of a file whose
# tests are done, what the runner had not read yet was lost, and the run stayed
# green with fewer tests (nodejs/node#64833).
node --import tsx --import ./scripts/test-child-stdout.ts --import ./test/support/machine-share.ts scripts/run-tests.ts "${tests[@]}"
