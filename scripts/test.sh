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
# each one's output is printed whole, in this order.
checks=(
  "bash scripts/check-generated.sh"
  "npx tsc -p tsconfig.json && echo 'types check'"
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
# the files waiting on LibreOffice, Kafka and the API server), in the order of
# their paths (the runner sorts them, whatever order they are given in); the
# two files that start a Kubernetes node take turns on it
# (test/support/kube-node-host.ts), and a load test has the machine to itself
# while it runs (test/support/machine-share.ts, loaded into each file).
mapfile -t tests < <(find services test clients operator -name '*.test.ts' -not -path '*/node_modules/*' | sort)
# A test that hangs fails after 15 minutes (the slowest suite, the Kubernetes
# node's, takes about 6), and a file whose tests are done exits even if a
# client it left open would keep it alive: either would otherwise hold the
# whole run until CI's limit, without saying which test it was. Each file's
# process writes its results to the runner blocking (scripts/test-child-stdout.ts):
# with --test-force-exit, what the runner had not read yet was lost, and the run
# stayed green with fewer tests (nodejs/node#64833).
node --import tsx --import ./scripts/test-child-stdout.ts --import ./test/support/machine-share.ts --test --test-reporter=spec --test-concurrency=3 --test-timeout=900000 --test-force-exit "${tests[@]}"
