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

# The signing certificate page embeds Unicode fonts (services/signing/certificate-page/certificate-page.ts):
# DejaVu Sans (fonts-dejavu-core) for Latin, Cyrillic, Greek and Arabic, Droid Sans Fallback
# (fonts-droid-fallback, a single TTF of about 4 MB) for CJK.
setup_fonts() {
  apt_install fonts-dejavu-core fonts-droid-fallback
  report fonts-droid-fallback "$(dpkg-query -W -f='${Version}' fonts-droid-fallback)" /usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf
}

setup_unoserver() {
  local requirements="$HERE/unoserver-requirements.txt" version
  version="$(sed -n 's/^unoserver==\([^ ]*\) .*/\1/p' "$requirements")"
  pip_tool unoserver "$version" "$requirements" "unoserver $version"
}

setup_libreoffice
setup_fonts
setup_unoserver
