#!/usr/bin/env bash
# Fails when gen/, the chart's CRD or @docservice/client's OpenAPI document and types are not what
# `npm run generate` makes from proto/, operator/crd.ts and the /v1 route tables.
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
# By content too: the file must parse back to the CRD object, so a serializer
# that drops keys fails even when its output is reproducible.
if ! node --import tsx --test --test-reporter=dot operator/write-crd.test.ts >&2; then
  echo "charts/docservice-operator/crds/ does not match operator/crd.ts: run 'npm run generate' and commit the result." >&2
  exit 1
fi
echo "the chart's CRD is up to date"
node --import tsx scripts/write-openapi.ts --check
echo "@docservice/client's OpenAPI document and types are up to date"
