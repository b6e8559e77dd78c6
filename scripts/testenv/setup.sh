#!/usr/bin/env bash
# Installs the native dependencies the integration tests need, into a cache
# shared between runs. Idempotent; a run with everything present takes well under a second.
#
# stdout: one line per component, "<name> <version> <path>". Everything else
# (apt, go build) goes to stderr.
#
# To add a component: pin its version in versions.env, write a setup_<name>
# function that installs it if missing and calls `report`, and call it at the end.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${DOCSERVICE_CACHE:-$HOME/.cache/docservice}"
BIN="$CACHE/bin"

# shellcheck source=versions.env
source "$HERE/versions.env"
MAILPIT_VERSION="$(awk '{ for (i = 1; i < NF; i++) if ($i == "github.com/axllent/mailpit") { print $(i + 1); exit } }' "$HERE/mailpit/go.mod")"

die() { echo "setup.sh: $*" >&2; exit 1; }
log() { echo "setup.sh: $*" >&2; }
report() { printf '%-10s %-10s %s\n' "$1" "$2" "$3"; }

# Runs a command as root (sudo -n never prompts: no stdin in CI).
as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found; install manually: $*"
  if [[ $APT_UPDATED -eq 0 ]]; then
    as_root apt-get update -q >&2
    APT_UPDATED=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
}

# Debian packages start their daemon on install; tests start their own
# instances on random ports, so stop it and keep it from starting at boot.
disable_service() {
  local svc="$1"
  if [[ -d /run/systemd/system ]]; then
    as_root systemctl disable --now "$svc" >&2 || true
  else
    as_root service "$svc" stop >&2 || true
    as_root update-rc.d "$svc" disable >&2 || true
  fi
}

setup_redis() {
  if ! command -v redis-server >/dev/null; then
    log "installing redis-server (Debian package)"
    apt_install redis-server
    disable_service redis-server
  fi
  local path version
  path="$(command -v redis-server)"
  # "Redis server v=7.0.15 sha=..." -> 7.0.15
  version="$(redis-server --version | sed -n 's/.* v=\([0-9.]*\).*/\1/p')"
  [[ "$version" == "$REDIS_SERIES".* ]] ||
    die "$path is redis ${version:-(unknown version)}, tests need $REDIS_SERIES.x (Debian 12 package redis-server)"
  report redis "$version" "$path"
}

setup_mailpit() {
  [[ "$MAILPIT_VERSION" == v* ]] || die "cannot read the mailpit version from $HERE/mailpit/go.mod"
  local target="$BIN/mailpit-$MAILPIT_VERSION"
  # The version check also catches a binary that no longer runs.
  if ! "$target" version --no-release-check 2>/dev/null | grep -q " $MAILPIT_VERSION "; then
    command -v go >/dev/null || die "go not found; Go >= 1.24 is needed to build mailpit"
    log "building mailpit $MAILPIT_VERSION (first time only)"
    local tmp="$target.tmp.$$"
    trap "rm -f '$tmp'" EXIT
    # -mod=readonly: go.sum must already pin every module, so nothing unverified
    # is fetched and the checksum database is never needed.
    (cd "$HERE/mailpit" && GOWORK=off GOTOOLCHAIN=local GOSUMDB=off CGO_ENABLED=0 \
      go build -mod=readonly -buildvcs=false -trimpath \
        -ldflags "-s -w -X github.com/axllent/mailpit/config.Version=$MAILPIT_VERSION" \
        -o "$tmp" github.com/axllent/mailpit) >&2
    mv -f "$tmp" "$target"
    trap - EXIT
  fi
  # Stable name for the tests (test/support/cache.ts); replaced atomically.
  ln -sfn "mailpit-$MAILPIT_VERSION" "$BIN/mailpit.tmp.$$"
  mv -fT "$BIN/mailpit.tmp.$$" "$BIN/mailpit"
  report mailpit "$MAILPIT_VERSION" "$target"
}

mkdir -p "$BIN"
setup_redis
setup_mailpit
