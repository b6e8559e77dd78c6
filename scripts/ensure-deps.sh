#!/usr/bin/env bash
# Installs the npm dependencies exactly as locked (postinstall applies patches/),
# with the pinned Node 24 (scripts/install/node.sh), when node_modules is missing
# or was installed from another lock file, patch set or Node version (native
# addons are built for one Node ABI).
#
# The installed tree is kept in the cache as an archive named by that same
# fingerprint, and a fresh clone unpacks it: `npm ci` from npm's own cache
# (~/.npm) still resolves, links, builds the native addons and patches for
# about half a minute each time, the archive unpacks in a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install/use-node.sh
source scripts/install/lib.sh

stamp=node_modules/.docservice-lock-sha256
wanted="$({ node --version; cat package-lock.json patches/*.patch; } | sha256sum | cut -d' ' -f1)"
[[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]] && exit 0

saved="$CACHE/node-modules/$wanted.tar"
rm -rf node_modules
mkdir node_modules
# the stamp is written after the archive unpacked whole: one cut short (a full disk, a killed run) is replaced
if [[ -f "$saved" ]] && tar -xf "$saved" -C node_modules; then
  echo "$wanted" > "$stamp"
  exit 0
fi
rm -rf node_modules "$saved"
echo "installing npm dependencies (npm ci, Node $(node --version))" >&2
npm ci --no-audit --no-fund --loglevel=error >&2
# written to a temporary name first, so a reader never unpacks half an archive (and one that failed, on a full disk, is
# removed); older fingerprints' archives go
mkdir -p "$CACHE/node-modules"
tar -cf "$saved.tmp.$$" -C node_modules . && mv -f "$saved.tmp.$$" "$saved" || rm -f "$saved.tmp.$$"
find "$CACHE/node-modules" -maxdepth 1 -type f -name '*.tar' -not -name "$wanted.tar" -delete
echo "$wanted" > "$stamp"
