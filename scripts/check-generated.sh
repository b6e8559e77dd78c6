#!/usr/bin/env bash
# Fails when gen/ is not what `npm run generate` makes from proto/.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$PWD/node_modules/.bin:$PATH"
buf lint
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
buf generate --output "$out"
if ! diff -r "$out/gen" gen >/dev/null; then
  diff -r "$out/gen" gen | head -40 >&2
  echo "gen/ is out of date with proto/: run 'npm run generate' and commit the result." >&2
  exit 1
fi
echo "generated code is up to date"
if ! node --import tsx operator/write-crd.ts | diff - charts/docservice-operator/crds/docservices.docservice.dev.yaml >/dev/null; then
  echo "charts/docservice-operator/crds/ is out of date with operator/crd.ts: run 'npm run generate' and commit the result." >&2
  exit 1
fi
echo "the chart's CRD is up to date"
