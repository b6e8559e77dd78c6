#!/usr/bin/env bash
# Debian's Chromium for the browser tests, driven by playwright-core
# (test/support/browser.ts launches /usr/bin/chromium; Playwright's own browser
# download has no network to reach). Called by setup.sh.
#
# Not pinned to a version: Debian 12 ships Chromium's new major releases as
# security updates and keeps no older one, so the tests use whichever it has.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../install/lib.sh"

setup_chromium() {
  local bin=/usr/bin/chromium version
  apt_install chromium
  # "Chromium 156.0.8078.79 built on Debian GNU/Linux 12 (bookworm)" -> 156.0.8078.79
  version="$("$bin" --version 2>/dev/null | awk '$1 == "Chromium" {print $2}')"
  [[ -n "$version" ]] || die "$bin --version does not run (Debian package chromium)"
  report chromium "$version" "$bin"
}

setup_chromium
