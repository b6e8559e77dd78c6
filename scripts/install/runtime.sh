#!/usr/bin/env bash
# Installs what the platform itself runs on: LibreOffice with the metric-compatible
# fonts page layout depends on, and unoserver to keep it warm. Idempotent; a run
# with everything present takes well under a second. Used by `npm start` and `npm test`.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/lib.sh"
source "$HERE/versions.env"

setup_libreoffice() {
  # libreoffice-writer, not -nogui: the no-GUI variant lacks Writer's UI definitions
  # (annotation.ui), and without them documents with comments fail to load over UNO.
  # Carlito and Caladea are metric-compatible with Calibri and Cambria, Liberation with Arial, Times and Courier.
  apt_install libreoffice-writer python3-uno python3-venv \
    fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation2 fonts-dejavu-core
  local version
  version="$(soffice --version 2>/dev/null | awk '{print $2}')"
  [[ "$version" == "$LIBREOFFICE_SERIES".* ]] || die "soffice is LibreOffice ${version:-(none)}, expected $LIBREOFFICE_SERIES.x (Debian 12)"
  report libreoffice "$version" "$(command -v soffice)"
}

setup_unoserver() {
  local requirements="$HERE/unoserver-requirements.txt" version venv
  version="$(sed -n 's/^unoserver==\([^ ]*\) .*/\1/p' "$requirements")"
  venv="$CACHE/unoserver-$version"
  if [[ "$("$venv/bin/unoserver" --version 2>/dev/null)" != "unoserver $version" ]]; then
    log "installing unoserver $version from PyPI (first time only)"
    python_venv "$venv" "$requirements"
    [[ "$("$venv/bin/unoserver" --version 2>&1)" == "unoserver $version" ]] || die "$venv/bin/unoserver does not run"
  fi
  link_bin unoserver "../unoserver-$version/bin/unoserver"
  report unoserver "$version" "$venv/bin/unoserver"
}

setup_libreoffice
setup_unoserver
